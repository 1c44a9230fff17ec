// `npm run dev`: builds tools once, starts Temporal (with UI), the object store, stripe-mock
// and Mailpit unless TEMPORAL_ADDRESS / S3_ENDPOINT / STRIPE_API_BASE / SMTP_URL point
// elsewhere, migrates Postgres, then runs the worker and the API. Ctrl-C stops everything
// this command started.
import { spawn, ChildProcess } from 'node:child_process';
import path from 'node:path';
import { DEV_SMTP_URL, DEV_STRIPE_API_BASE, loadConfig } from '../config';
import { ensureStack, ROOT } from './stack';

async function main() {
  const config = loadConfig();
  const stripeApi = process.env.STRIPE_API_BASE;
  const { state, children } = await ensureStack({
    profile: 'dev',
    ports: {
      temporal: 7233,
      temporalUi: 8233,
      s3: Number(new URL(config.s3Endpoint).port || 9100),
      stripe: Number(new URL(config.stripe.apiBase ?? DEV_STRIPE_API_BASE).port),
      smtp: Number(new URL(DEV_SMTP_URL).port),
      mailUi: 8025,
    },
    databaseUrl: config.databaseUrl,
    temporalAddress: process.env.TEMPORAL_ADDRESS,
    s3Endpoint: process.env.S3_ENDPOINT,
    // STRIPE_API_BASE set (empty: Stripe's own API) means no stripe-mock.
    stripeApiBase: stripeApi === undefined ? undefined : stripeApi || 'https://api.stripe.com',
    // SMTP_URL set means a relay of your own: no Mailpit.
    smtpUrl: process.env.SMTP_URL || undefined,
    mailpitUrl: process.env.MAILPIT_URL,
    s3Bucket: config.s3Bucket,
    s3AccessKeyId: config.s3AccessKeyId,
    s3SecretAccessKey: config.s3SecretAccessKey,
    s3Region: config.s3Region,
    detached: false,
  });

  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: state.temporal.address,
    S3_ENDPOINT: state.s3.endpoint,
    STRIPE_API_BASE: stripeApi ?? state.stripe.apiBase,
    SMTP_URL: state.mail.smtpUrl,
    DATABASE_URL: config.databaseUrl,
  };
  const tsx = path.join(ROOT, 'node_modules', '.bin', 'tsx');
  const processes: ChildProcess[] = [...children];
  const run = (name: string, file: string) => {
    const child = spawn(tsx, [path.join(ROOT, file)], { env, stdio: 'inherit' });
    child.on('exit', (code, signal) => {
      if (!stopping) {
        console.error(`[dev] ${name} exited (${code ?? signal}); stopping`);
        stop();
      }
    });
    processes.push(child);
  };
  run('worker', 'worker/main.ts');
  run('api', 'api/server.ts');
  run('smtp', 'api/smtp/main.ts');

  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const p of processes) if (p.exitCode === null) p.kill('SIGTERM');
    setTimeout(() => process.exit(0), 3000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  const ui = state.temporal.uiUrl || '(external Temporal: see your cluster UI)';
  console.log(`
  Postal Mail API is starting
    Site           ${config.siteUrl}
    API            ${config.baseUrl}/v1
    OpenAPI        ${config.siteUrl}/openapi.json
    Health         ${config.siteUrl}/healthz
    Temporal UI    ${ui}
    SMTP intake    smtp://${config.host}:${config.smtpPort} (aliases @${config.inboundEmailDomain})
    Object store   ${state.s3.endpoint} (bucket ${config.s3Bucket})
    Email          ${state.mail.apiUrl ? `${state.mail.apiUrl} (Mailpit: every email the apps send, over ${state.mail.smtpUrl})` : state.mail.smtpUrl}
    Stripe API     ${state.stripe.apiBase}${state.stripe.external ? '' : ' (stripe-mock; buying credits goes through the local checkout page)'}
    Postgres       ${config.databaseUrl}
  Create an account:  npm run admin -- member:create --email you@example.com --name "You" --credits-cents 5000 --json
  Ctrl-C stops everything started here.
`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
