// `npm run stack:cluster`: the cluster profile in the foreground (scripts/cluster.ts): a
// Temporal cluster on Postgres (frontend, history, matching and worker services as separate
// processes), its Web UI, the object store, two API processes, two worker processes and the
// SMTP intake. Logs go to .data/cluster/<process>.log. Ctrl-C stops everything started here
// (applications first, so they drain); processes reused from an earlier detached run
// (`npm run test:cluster`) keep running until `npm run stack:stop`.
import { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { loadConfig } from '../config';
import { ensureCluster, stopPids } from './cluster';
import { ROOT } from './stack';

async function main() {
  const { state, started } = await ensureCluster({ detached: false, apps: true });
  const appPids = new Set([
    ...state.apis.map((a) => a.pid),
    ...state.workers.map((w) => w.pid),
    ...(state.smtp ? [state.smtp.pid] : []),
  ]);

  let stopping = false;
  for (const child of started) {
    child.on('exit', (code, signal) => {
      if (!stopping)
        console.error(
          `[cluster] pid ${child.pid} (${path.basename(child.spawnfile)} ${child.spawnargs.slice(-1)[0]}) exited (${code ?? signal}); the others keep running`,
        );
    });
  }
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    console.log('[cluster] stopping (applications drain first) ...');
    const pids = (children: ChildProcess[]) =>
      children.filter((c) => c.exitCode === null && c.signalCode === null).map((c) => c.pid!);
    await stopPids(pids(started.filter((c) => appPids.has(c.pid!))), 40000);
    await stopPids(pids(started.filter((c) => !appPids.has(c.pid!))), 20000);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());

  const config = loadConfig();
  const logs = path.relative(process.cwd(), path.join(ROOT, '.data', 'cluster'));
  console.log(`
  Postal Mail API, cluster profile
    APIs           ${state.apis.map((a) => `${a.siteUrl}/api/v1`).join('  ')}
    Readiness      ${state.apis.map((a) => `${a.siteUrl}/readyz`).join('  ')}
    Workers        pids ${state.workers.map((w) => w.pid).join(', ')} on task queue ${state.taskQueue}
    SMTP intake    smtp://127.0.0.1:${state.smtp?.port} (aliases @${config.inboundEmailDomain})
    Temporal       ${state.frontendAddress} (namespace ${state.namespace}; frontend, history, matching and worker services, pids ${Object.values(
      state.services,
    )
      .map((s) => s.pid)
      .join(', ')})
    Temporal UI    ${state.uiUrl || '(not built: see the log above)'}
    Object store   ${state.s3Endpoint} (bucket ${config.s3Bucket})
    Email          ${state.mailpitUrl ? `${state.mailpitUrl} (Mailpit: every email the apps send, over ${state.smtpUrl})` : state.smtpUrl}
    Postgres       ${state.databaseUrl} (Temporal: temporal_cluster, temporal_cluster_visibility)
    Logs           ${logs}/*.log
  Create an account:  DATABASE_URL=${state.databaseUrl} npm run admin -- member:create --email you@example.com --name "You" --credits-cents 5000 --json
  Ctrl-C stops everything started here.
`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
