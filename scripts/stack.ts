// Local stack bootstrap shared by `npm run dev` and `npm test`: builds the Temporal CLI,
// the S3-compatible object store, stripe-mock and Mailpit (and, for the test profile, oapi-codegen,
// which generates the Go SDK) into .tools/ once, starts them with data under
// .data/<profile>/, creates the bucket and the Postgres database, and runs migrations.
// A profile's state (ports, pids) is kept in .data/<profile>/stack.json so that a second
// run reuses what is still running and starts in seconds.
import { spawn, execFileSync, ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, openSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Client } from 'pg';
import { S3Client, CreateBucketCommand, HeadBucketCommand } from '@aws-sdk/client-s3';
import { SEARCH_ATTRIBUTE_REGISTRATIONS } from '../workflows/shared/search-attributes';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const ROOT = path.resolve(__dirname, '..');
export const TOOLS_BIN = path.join(ROOT, '.tools', 'bin');
export const TEMPORAL_BIN = path.join(TOOLS_BIN, 'temporal');

/**
 * The dev server's SQLite file in WAL mode with synchronous=NORMAL: still safe when any
 * process is killed (the fault tests kill the server), without an fsync per commit. In
 * the default rollback-journal mode the server started ~110 workflows/s here; in WAL mode
 * ~280/s, which is what a submission's workflow start waits on.
 */
export const TEMPORAL_SQLITE_PRAGMAS = ['--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal'];
export const OBJECT_STORE_BIN = path.join(TOOLS_BIN, 'versitygw');
/** Stripe's API mock: answers every Stripe API call with fixture objects, keeps no state, sends no events. */
export const STRIPE_MOCK_BIN = path.join(TOOLS_BIN, 'stripe-mock');
/** Mailpit: an SMTP server that keeps what it receives, with a web UI and an HTTP API the tests read. */
export const MAILPIT_BIN = path.join(TOOLS_BIN, 'mailpit');
/** oapi-codegen: generates the Go SDK (sdk/go) from the OpenAPI document (scripts/sdk-generate.ts). */
export const OAPI_CODEGEN_BIN = path.join(TOOLS_BIN, 'oapi-codegen');

const TEMPORAL_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';
const OBJECT_STORE_MODULE = 'github.com/versity/versitygw/cmd/versitygw@v1.8.0';
const STRIPE_MOCK_MODULE = 'github.com/stripe/stripe-mock@v0.203.0';
const MAILPIT_MODULE = 'github.com/axllent/mailpit@v1.33.1';
const OAPI_CODEGEN_MODULE = 'github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2';

export interface StackState {
  temporal: { address: string; uiUrl: string; pid?: number; external: boolean };
  s3: { endpoint: string; pid?: number; external: boolean };
  /** The Stripe API the apps use (STRIPE_API_BASE): stripe-mock, or an external one. */
  stripe: { apiBase: string; pid?: number; external: boolean };
  /**
   * Where the apps send email (SMTP_URL) and, for Mailpit, its web UI and API (MAILPIT_URL);
   * an external relay has no API (apiUrl empty).
   */
  mail: { smtpUrl: string; apiUrl: string; pid?: number; external: boolean };
  databaseUrl: string;
}

/** dev: `npm run dev`; test: `npm test` and the bench; cluster: the object store and database of scripts/cluster.ts. */
export type StackProfile = 'dev' | 'test' | 'cluster';

export interface StackOptions {
  profile: StackProfile;
  /** Fixed ports for dev; tests take free ports. */
  ports?: { temporal: number; temporalUi: number; s3: number; stripe?: number; smtp?: number; mailUi?: number };
  databaseUrl: string;
  temporalAddress?: string; // external Temporal: do not start one
  s3Endpoint?: string; // external object store: do not start one
  stripeApiBase?: string; // external Stripe API (or mock): do not start stripe-mock
  /** An external SMTP relay (SMTP_URL) and, when it is a Mailpit, its API: do not start Mailpit. */
  smtpUrl?: string;
  mailpitUrl?: string;
  s3Bucket: string;
  s3AccessKeyId: string;
  s3SecretAccessKey: string;
  s3Region: string;
  /** Detached services outlive this process (tests reuse them); attached ones die with it (dev). */
  detached: boolean;
  log?: (msg: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Builds the Temporal CLI, the object store, stripe-mock, Mailpit and oapi-codegen in parallel when any is missing. */
export async function ensureTools(
  opts: { temporal: boolean; s3: boolean; stripe?: boolean; mail?: boolean; oapiCodegen?: boolean },
  log: (m: string) => void,
): Promise<void> {
  const jobs: Promise<void>[] = [];
  const build = (module: string, bin: string) =>
    new Promise<void>((resolve, reject) => {
      if (existsSync(bin)) return resolve();
      mkdirSync(TOOLS_BIN, { recursive: true });
      log(`building ${module} into .tools/bin (first run only; takes a few minutes) ...`);
      const child = spawn('go', ['install', module], {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, GOBIN: TOOLS_BIN, CGO_ENABLED: '0' },
      });
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`go install ${module} failed (${code})`))));
    });
  if (opts.temporal) jobs.push(build(TEMPORAL_MODULE, TEMPORAL_BIN));
  if (opts.s3) jobs.push(build(OBJECT_STORE_MODULE, OBJECT_STORE_BIN));
  if (opts.stripe) jobs.push(build(STRIPE_MOCK_MODULE, STRIPE_MOCK_BIN));
  if (opts.mail) jobs.push(build(MAILPIT_MODULE, MAILPIT_BIN));
  if (opts.oapiCodegen) jobs.push(build(OAPI_CODEGEN_MODULE, OAPI_CODEGEN_BIN));
  await Promise.all(jobs);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

export function pidAlive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The process is alive and was started on this file (on Linux; elsewhere, alive is enough). */
function runsOn(pid: number | undefined, file: string): boolean {
  if (!pidAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(file);
  } catch {
    return true;
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 60000): Promise<void> {
  const start = Date.now();
  while (Date.now() - start < timeoutMs) {
    if (await check()) return;
    await sleep(250);
  }
  throw new Error(`${what} did not become ready within ${timeoutMs / 1000}s`);
}

function startProcess(cmd: string, args: string[], logFile: string, detached: boolean): ChildProcess {
  const out = openSync(logFile, 'a');
  const child = spawn(cmd, args, { stdio: ['ignore', out, out], detached });
  if (detached) child.unref();
  return child;
}

async function temporalHealthy(address: string): Promise<boolean> {
  const [host, port] = address.split(':');
  if (!(await portOpen(Number(port), host))) return false;
  try {
    execFileSync(TEMPORAL_BIN, ['operator', 'search-attribute', 'list', '--address', address], {
      stdio: 'pipe',
      timeout: 5000,
    });
    return true;
  } catch {
    return false;
  }
}

/**
 * A dev server started before a search attribute was added lacks it, and every workflow
 * that sets it would fail its task: register what is missing (as scripts/cluster.ts does).
 */
function registerMissingSearchAttributes(address: string, log: (m: string) => void): void {
  const listed =
    JSON.parse(
      execFileSync(TEMPORAL_BIN, ['operator', 'search-attribute', 'list', '--address', address, '-o', 'json'], {
        stdio: 'pipe',
        timeout: 10000,
      }).toString(),
    ).customAttributes ?? {};
  const missing = SEARCH_ATTRIBUTE_REGISTRATIONS.map((r) => r.split('=') as [string, string]).filter(
    ([name]) => !(name in listed),
  );
  if (!missing.length) return;
  execFileSync(
    TEMPORAL_BIN,
    [
      'operator',
      'search-attribute',
      'create',
      '--address',
      address,
      ...missing.flatMap(([name, type]) => ['--name', name, '--type', type]),
    ],
    { stdio: 'pipe', timeout: 30000 },
  );
  log(`search attributes registered: ${missing.map(([n]) => n).join(', ')}`);
}

function s3Client(opts: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string }): S3Client {
  return new S3Client({
    endpoint: opts.endpoint,
    region: opts.region,
    forcePathStyle: true,
    credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
  });
}

async function ensureBucket(client: S3Client, bucket: string): Promise<void> {
  try {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
  } catch {
    try {
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw err;
    }
  }
}

/** Drops a throwaway database (a test or bench run's), closing its connections first. */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const dbName = decodeURIComponent(url.pathname.replace(/^\//, ''));
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS "${dbName.replace(/"/g, '""')}" WITH (FORCE)`).catch(() => undefined);
  } finally {
    await admin.end();
  }
}

export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const dbName = decodeURIComponent(url.pathname.replace(/^\//, ''));
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
    if (found.rowCount === 0) {
      await admin.query(`CREATE DATABASE "${dbName.replace(/"/g, '""')}"`);
    }
  } finally {
    await admin.end();
  }
}

/** Key of the Postgres advisory lock that migration runs take (any constant of our own). */
const MIGRATION_LOCK_KEY = 1733240000;

/**
 * Runs TypeORM migrations against the database, one run at a time: a second run (another
 * deploy job, `npm run admin`, a second API started at once) waits for the first, then
 * finds nothing pending, instead of applying the same migration twice.
 */
export async function migrate(databaseUrl: string): Promise<string[]> {
  const lock = new Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const { createDataSource } = await import('../entities/data-source');
    const ds = createDataSource({ databaseUrl, poolSize: 2 });
    await ds.initialize();
    try {
      const ran = await ds.runMigrations({ transaction: 'each' });
      return ran.map((m) => m.name);
    } finally {
      await ds.destroy();
    }
  } finally {
    // Ending the session releases the lock.
    await lock.end();
  }
}

/**
 * Debian packages the API and worker shell out to: Tesseract OCR and poppler's
 * pdftotext/pdftoppm, headless Chromium (HTML and Markdown letters, and the page tests),
 * LibreOffice Writer (DOCX letters laid out for print), and the fonts both renderers are
 * allowed to use (docs/agents.md, Letters in HTML, Markdown and DOCX).
 */
const SYSTEM_PACKAGES = [
  'tesseract-ocr',
  'tesseract-ocr-eng',
  'poppler-utils',
  'chromium',
  'libreoffice-writer-nogui',
  'fonts-dejavu-core',
  'fonts-liberation2',
  'fonts-crosextra-carlito',
  'fonts-crosextra-caladea',
];
const SYSTEM_COMMANDS = ['tesseract', 'pdftoppm', 'pdftotext', 'chromium', 'soffice'];
/** Packages that install no command (fonts): asked of dpkg. */
const SYSTEM_FONT_PACKAGES = SYSTEM_PACKAGES.filter((p) => p.startsWith('fonts-'));

function commandMissing(cmd: string): boolean {
  try {
    execFileSync('which', [cmd], { stdio: 'pipe' });
    return false;
  } catch {
    return true;
  }
}

function packageMissing(pkg: string): boolean {
  try {
    return !execFileSync('dpkg-query', ['-W', '-f=${Status}', pkg], { stdio: 'pipe' })
      .toString()
      .includes('install ok installed');
  } catch {
    return true;
  }
}

/** Installs the OCR and PDF tools, Chromium, LibreOffice Writer and the fonts with apt-get when any is missing (root only). */
export function ensureSystemPackages(log: (m: string) => void): void {
  const missing = [...SYSTEM_COMMANDS.filter(commandMissing), ...SYSTEM_FONT_PACKAGES.filter(packageMissing)];
  if (!missing.length) return;
  if (process.getuid?.() !== 0) {
    log(
      `missing ${missing.join(', ')}: run as root \`apt-get update && apt-get install -y --no-install-recommends ${SYSTEM_PACKAGES.join(' ')}\`; inbound OCR and PDF extraction need them, HTML, Markdown and DOCX letters need Chromium, LibreOffice and the fonts`,
    );
    return;
  }
  log(`installing ${SYSTEM_PACKAGES.join(' ')} (missing ${missing.join(', ')}) ...`);
  execFileSync(
    'bash',
    [
      '-c',
      `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ${SYSTEM_PACKAGES.join(' ')}`,
    ],
    { stdio: 'inherit' },
  );
}

/** Starts (or reuses) stripe-mock on its port (or a free one); a run with an external Stripe API uses that. */
async function ensureStripeMock(
  opts: StackOptions,
  previous: Partial<StackState>,
  dataDir: string,
  children: ChildProcess[],
  log: (m: string) => void,
): Promise<StackState['stripe']> {
  if (opts.stripeApiBase) return { apiBase: opts.stripeApiBase, external: true };
  const prev = previous.stripe;
  if (
    prev &&
    !prev.external &&
    runsOn(prev.pid, STRIPE_MOCK_BIN) &&
    (await portOpen(Number(new URL(prev.apiBase).port)))
  ) {
    log(`reusing stripe-mock at ${prev.apiBase}`);
    return prev;
  }
  const port = opts.ports?.stripe ?? (await freePort());
  const apiBase = `http://127.0.0.1:${port}`;
  if (await portOpen(port)) {
    log(`something already answers at ${apiBase}; using it as the Stripe API`);
    return { apiBase, external: true };
  }
  // stripe-mock also serves HTTPS, on port 12112 unless told otherwise: a socket file of
  // this profile's keeps two stacks (or a developer's own stripe-mock) from colliding there.
  const httpsSocket = path.join(dataDir, 'stripe-mock-https.sock');
  rmSync(httpsSocket, { force: true });
  const child = startProcess(
    STRIPE_MOCK_BIN,
    ['-http-addr', `127.0.0.1:${port}`, '-https-unix', httpsSocket],
    path.join(dataDir, 'stripe-mock.log'),
    opts.detached,
  );
  children.push(child);
  log(`starting stripe-mock at ${apiBase} ...`);
  await waitFor('stripe-mock', () => portOpen(port), 30000);
  return { apiBase, pid: child.pid, external: false };
}

/** Mailpit answers its API here (GET /api/v1/info names its version). */
async function mailpitAnswers(apiUrl: string): Promise<boolean> {
  try {
    const res = await fetch(`${apiUrl}/api/v1/info`, { signal: AbortSignal.timeout(2000) });
    return res.ok && typeof ((await res.json()) as { Version?: unknown }).Version === 'string';
  } catch {
    return false;
  }
}

/**
 * Starts Mailpit on its ports (dev: 1025 and 8025, unless taken; tests: free ones) with its
 * data under the profile's directory. Exported for the fault test that stops the SMTP server
 * and starts it again on the same ports and data.
 */
export function startMailpit(
  dataDir: string,
  ports: { smtp: number; ui: number },
  detached: boolean,
  opts: { maxMessages?: number } = {},
): ChildProcess {
  return startProcess(
    MAILPIT_BIN,
    [
      '--smtp',
      `127.0.0.1:${ports.smtp}`,
      '--listen',
      `127.0.0.1:${ports.ui}`,
      '--database',
      path.join(dataDir, 'mailpit.db'),
      // A test run reads its own messages by recipient; the dev UI keeps Mailpit's 500.
      '--max',
      String(opts.maxMessages ?? 500),
      '--disable-version-check',
      '--smtp-auth-accept-any',
      '--smtp-auth-allow-insecure',
    ],
    path.join(dataDir, 'mailpit.log'),
    detached,
  );
}

/** Starts (or reuses) Mailpit; a run given an SMTP relay (SMTP_URL) uses that and starts none. */
async function ensureMailpit(
  opts: StackOptions,
  previous: Partial<StackState>,
  dataDir: string,
  children: ChildProcess[],
  log: (m: string) => void,
): Promise<StackState['mail']> {
  if (opts.smtpUrl) return { smtpUrl: opts.smtpUrl, apiUrl: opts.mailpitUrl ?? '', external: true };
  const prev = previous.mail;
  if (prev && !prev.external && runsOn(prev.pid, MAILPIT_BIN) && (await mailpitAnswers(prev.apiUrl))) {
    log(`reusing Mailpit at ${prev.apiUrl}`);
    return prev;
  }
  const wanted = { smtp: opts.ports?.smtp, ui: opts.ports?.mailUi };
  if (
    wanted.smtp &&
    wanted.ui &&
    (await portOpen(wanted.smtp)) &&
    (await mailpitAnswers(`http://127.0.0.1:${wanted.ui}`))
  ) {
    log(`a Mailpit already answers at http://127.0.0.1:${wanted.ui}; using it`);
    return { smtpUrl: `smtp://127.0.0.1:${wanted.smtp}`, apiUrl: `http://127.0.0.1:${wanted.ui}`, external: true };
  }
  // Its default ports when free, else free ones (another program may hold 1025 or 8025).
  const smtp = wanted.smtp && !(await portOpen(wanted.smtp)) ? wanted.smtp : await freePort();
  const ui = wanted.ui && !(await portOpen(wanted.ui)) ? wanted.ui : await freePort();
  const child = startMailpit(dataDir, { smtp, ui }, opts.detached, {
    maxMessages: opts.profile === 'dev' ? 500 : 0,
  });
  children.push(child);
  const apiUrl = `http://127.0.0.1:${ui}`;
  log(`starting Mailpit: SMTP 127.0.0.1:${smtp}, UI ${apiUrl} ...`);
  await waitFor('Mailpit', async () => (await portOpen(smtp)) && mailpitAnswers(apiUrl), 30000);
  return { smtpUrl: `smtp://127.0.0.1:${smtp}`, apiUrl, pid: child.pid, external: false };
}

/** Starts (or reuses) Temporal, the object store, stripe-mock and Mailpit, creates bucket and database, migrates. */
export async function ensureStack(opts: StackOptions): Promise<{ state: StackState; children: ChildProcess[] }> {
  const log = opts.log ?? ((m: string) => console.log(`[stack] ${m}`));
  const dataDir = path.join(ROOT, '.data', opts.profile);
  mkdirSync(dataDir, { recursive: true });
  const stateFile = path.join(dataDir, 'stack.json');
  const previous: Partial<StackState> = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : {};
  const children: ChildProcess[] = [];

  ensureSystemPackages(log);
  await ensureTools(
    {
      temporal: !opts.temporalAddress,
      s3: !opts.s3Endpoint,
      stripe: !opts.stripeApiBase,
      mail: !opts.smtpUrl,
      // The SDK drift test (test/unit/sdk-drift.test.ts) regenerates the Go SDK with it.
      oapiCodegen: opts.profile === 'test',
    },
    log,
  );

  // Temporal
  let temporal: StackState['temporal'];
  if (opts.temporalAddress) {
    temporal = { address: opts.temporalAddress, uiUrl: '', external: true };
  } else if (
    previous.temporal &&
    !previous.temporal.external &&
    runsOn(previous.temporal.pid, path.join(dataDir, 'temporal.sqlite'))
  ) {
    // Still running: a busy server can be slow to answer, but a second server on the same
    // SQLite file would fight it for the database, so wait for this one instead.
    temporal = previous.temporal;
    try {
      await waitFor(
        `Temporal at ${temporal.address} (pid ${temporal.pid})`,
        () => temporalHealthy(temporal.address),
        120000,
      );
    } catch (err) {
      throw new Error(
        `${(err as Error).message}; it still runs on ${path.join(dataDir, 'temporal.sqlite')}: stop it (npm run stack:stop) and retry`,
      );
    }
    log(`reusing Temporal at ${temporal.address}`);
    registerMissingSearchAttributes(temporal.address, log);
  } else {
    const port = opts.ports?.temporal ?? (await freePort());
    const uiPort = opts.ports?.temporalUi ?? (await freePort());
    const address = `127.0.0.1:${port}`;
    if (await temporalHealthy(address)) {
      temporal = { address, uiUrl: `http://127.0.0.1:${uiPort}`, external: true };
      log(`Temporal already answers at ${address}; using it`);
      registerMissingSearchAttributes(address, log);
    } else {
      const args = [
        'server',
        'start-dev',
        '--ip',
        '127.0.0.1',
        '--port',
        String(port),
        '--ui-port',
        String(uiPort),
        '--db-filename',
        path.join(dataDir, 'temporal.sqlite'),
        '--log-level',
        'warn',
        ...TEMPORAL_SQLITE_PRAGMAS,
      ];
      for (const sa of SEARCH_ATTRIBUTE_REGISTRATIONS) args.push('--search-attribute', sa);
      const child = startProcess(TEMPORAL_BIN, args, path.join(dataDir, 'temporal.log'), opts.detached);
      children.push(child);
      temporal = { address, uiUrl: `http://127.0.0.1:${uiPort}`, pid: child.pid, external: false };
      log(`starting Temporal dev server at ${address} (UI ${temporal.uiUrl}) ...`);
      await waitFor('Temporal', () => temporalHealthy(address), 90000);
    }
  }

  // Object store
  let s3: StackState['s3'];
  if (opts.s3Endpoint) {
    s3 = { endpoint: opts.s3Endpoint, external: true };
  } else if (
    previous.s3 &&
    !previous.s3.external &&
    pidAlive(previous.s3.pid) &&
    (await portOpen(Number(new URL(previous.s3.endpoint).port)))
  ) {
    s3 = previous.s3;
    log(`reusing object store at ${s3.endpoint}`);
  } else {
    const port = opts.ports?.s3 ?? (await freePort());
    const endpoint = `http://127.0.0.1:${port}`;
    if (await portOpen(port)) {
      s3 = { endpoint, external: true };
      log(`object store already answers at ${endpoint}; using it`);
    } else {
      const storeDir = path.join(dataDir, 's3');
      mkdirSync(storeDir, { recursive: true });
      const child = startProcess(
        OBJECT_STORE_BIN,
        [
          '--port',
          `127.0.0.1:${port}`,
          '--access',
          opts.s3AccessKeyId,
          '--secret',
          opts.s3SecretAccessKey,
          '--region',
          opts.s3Region,
          '--quiet',
          '--keep-alive',
          'posix',
          storeDir,
        ],
        path.join(dataDir, 'object-store.log'),
        opts.detached,
      );
      children.push(child);
      s3 = { endpoint, pid: child.pid, external: false };
      log(`starting object store (versitygw) at ${endpoint} ...`);
      await waitFor('object store', () => portOpen(port), 30000);
    }
  }
  await ensureBucket(
    s3Client({
      endpoint: s3.endpoint,
      region: opts.s3Region,
      accessKeyId: opts.s3AccessKeyId,
      secretAccessKey: opts.s3SecretAccessKey,
    }),
    opts.s3Bucket,
  );

  const stripe = await ensureStripeMock(opts, previous, dataDir, children, log);
  const mail = await ensureMailpit(opts, previous, dataDir, children, log);

  // Postgres
  await ensureDatabase(opts.databaseUrl);
  const ran = await migrate(opts.databaseUrl);
  if (ran.length) log(`migrations applied: ${ran.join(', ')}`);

  const state: StackState = { temporal, s3, stripe, mail, databaseUrl: opts.databaseUrl };
  // A run against an external service (TEST_TEMPORAL_ADDRESS, ...) keeps the record of this
  // profile's own server: forgetting it would make the next run start a second server on
  // the same data while the first still runs.
  const keep = <T extends { external: boolean }>(used: T, before: T | undefined) =>
    used.external && before && !before.external ? before : used;
  writeFileSync(
    stateFile,
    JSON.stringify(
      {
        ...state,
        temporal: keep(temporal, previous.temporal),
        s3: keep(s3, previous.s3),
        stripe: keep(stripe, previous.stripe),
        mail: keep(mail, previous.mail),
      },
      null,
      2,
    ),
  );
  return { state, children };
}

export function readStackState(profile: StackProfile): StackState | undefined {
  const file = path.join(ROOT, '.data', profile, 'stack.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

export function stopStack(profile: StackProfile): void {
  const state = readStackState(profile);
  if (!state) return;
  for (const svc of [state.temporal, state.s3, state.stripe, state.mail]) {
    if (!svc) continue; // a state file written before stripe-mock or Mailpit was part of the stack
    if (!svc.external && svc.pid && pidAlive(svc.pid)) {
      try {
        process.kill(svc.pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
    }
  }
}
