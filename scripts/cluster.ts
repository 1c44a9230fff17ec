// The cluster profile of the local stack (`npm run stack:cluster`, `npm run test:cluster`,
// `BENCH_STACK=cluster npm run bench`): the production shape on one machine. The Temporal
// server (go.temporal.io/server, the version the CLI's dev server embeds) runs as four
// processes (frontend, history, matching, internal worker) configured by
// scripts/cluster/temporal/cluster.yaml, with persistence and SQL visibility in Postgres
// databases of their own; the namespace and the custom search attributes are registered;
// the Web UI points at the frontend; the object store, the application database, and two
// API processes, two worker processes and the SMTP intake run against it.
// Everything it starts is recorded in .data/cluster/cluster.json (pids, ports), so a later
// run reuses what still runs, restarts what died, and `npm run stack:stop` stops it.
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { loadConfig } from '../config';
import { SEARCH_ATTRIBUTE_REGISTRATIONS } from '../workflows/shared/search-attributes';
import { ensureStack, ensureTools, pidAlive, portOpen, ROOT, stopStack, TEMPORAL_BIN, TOOLS_BIN } from './stack';

const run = promisify(execFile);

const TEMPORAL_SERVER_VERSION = 'v1.29.1';
const TEMPORAL_SERVER_BIN = path.join(TOOLS_BIN, 'temporal-server');
const TEMPORAL_SQL_TOOL_BIN = path.join(TOOLS_BIN, 'temporal-sql-tool');
const TEMPORAL_UI_BIN = path.join(TOOLS_BIN, 'temporal-ui-server');

/**
 * Each binary comes from `go install <module>`; the server and the UI server are both
 * called `server` there, so each is installed into a folder of its own and renamed.
 * The UI server version is the one the Temporal CLI v1.5.1 embeds.
 */
const CLUSTER_TOOLS = [
  {
    module: `go.temporal.io/server/cmd/server@${TEMPORAL_SERVER_VERSION}`,
    installedAs: 'server',
    bin: TEMPORAL_SERVER_BIN,
  },
  {
    module: `go.temporal.io/server/cmd/tools/sql@${TEMPORAL_SERVER_VERSION}`,
    installedAs: 'sql',
    bin: TEMPORAL_SQL_TOOL_BIN,
  },
  { module: 'github.com/temporalio/ui-server/v2/cmd/server@v2.42.1', installedAs: 'server', bin: TEMPORAL_UI_BIN },
] as const;

const TEMPORAL_SERVICES = ['history', 'matching', 'frontend', 'worker'] as const;
export type TemporalServiceName = (typeof TEMPORAL_SERVICES)[number];

/** Fixed ports, away from the dev profile's (7233, 8233, 9100, 3000, 2525). */
const CLUSTER_PORTS = {
  temporal: {
    frontend: { grpc: 7333, http: 7343, membership: 6333, metrics: 9333 },
    history: { grpc: 7334, membership: 6334, metrics: 9334 },
    matching: { grpc: 7335, membership: 6335, metrics: 9335 },
    worker: { grpc: 7339, membership: 6339, metrics: 9339 },
  },
  ui: 8334,
  s3: 9101,
  stripe: 12211,
  /** Mailpit: SMTP (the apps' SMTP_URL) and its web UI and API. */
  mailSmtp: 1125,
  mailUi: 8125,
  apis: [3100, 3101],
  smtp: 2625,
};

const CLUSTER_NAMESPACE = 'default';
/** How long Temporal keeps a closed workflow's history (see docs/deploying.md). */
const CLUSTER_RETENTION = '7d';
const CLUSTER_TASK_QUEUE = 'postal-mail';
const DATA_DIR = path.join(ROOT, '.data', 'cluster');
const STATE_FILE = path.join(DATA_DIR, 'cluster.json');

export interface ClusterState {
  frontendAddress: string;
  namespace: string;
  uiUrl: string;
  /** Where a fresh process of each service gets its settings (the template's variables). */
  serviceEnv: Record<string, string>;
  services: Record<TemporalServiceName, { pid: number; grpcPort: number }>;
  ui?: { pid: number };
  s3Endpoint: string;
  /** stripe-mock of the cluster profile (STRIPE_API_BASE of its apps and of the tests run there). */
  stripeApiBase?: string;
  /** Mailpit of the cluster profile: SMTP_URL of its apps and of the tests run there, and its API (MAILPIT_URL). */
  smtpUrl?: string;
  mailpitUrl?: string;
  databaseUrl: string;
  taskQueue: string;
  apis: Array<{ pid: number; siteUrl: string }>;
  workers: Array<{ pid: number }>;
  smtp?: { pid: number; port: number };
}

export interface ClusterOptions {
  /** Detached processes outlive this one (tests, bench); attached ones stop with it (stack:cluster). */
  detached: boolean;
  /** Start the two APIs, two workers and the SMTP intake too (not needed by the test and bench runs). */
  apps: boolean;
  log?: (m: string) => void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function readClusterState(): ClusterState | undefined {
  return existsSync(STATE_FILE) ? JSON.parse(readFileSync(STATE_FILE, 'utf8')) : undefined;
}

function writeClusterState(state: ClusterState): void {
  mkdirSync(DATA_DIR, { recursive: true });
  writeFileSync(STATE_FILE, JSON.stringify(state, null, 2));
}

/** The process's argv, or null when it is gone or a zombie (killed, not yet reaped). */
function argvOf(pid: number | undefined): string[] | null {
  if (!pidAlive(pid)) return null;
  try {
    if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return null;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return null;
  }
}

/** The pid runs and its command line contains every one of `words` (so a reused pid does not count). */
function runsWith(pid: number | undefined, ...words: string[]): boolean {
  const argv = argvOf(pid);
  return !!argv && words.every((w) => argv.some((a) => a.includes(w)));
}

function logTail(file: string | undefined): string {
  return file && existsSync(file)
    ? `\n--- ${path.relative(ROOT, file)} (last lines) ---\n${readFileSync(file, 'utf8').split('\n').slice(-15).join('\n')}`
    : '';
}

/** Polls `check`; gives up at the deadline, or at once when `exited` names a process that died (its log file). */
async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
  logFile?: string,
  exited: () => string | undefined = () => undefined,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return;
    const dead = exited();
    if (dead) throw new Error(`${what}: a process exited while starting${logTail(dead)}`);
    await sleep(250);
  }
  throw new Error(`${what} was not ready within ${timeoutMs / 1000}s${logTail(logFile)}`);
}

/** Builds the server, its SQL tool and the UI server (plus the CLI and object store) when missing. */
async function ensureClusterTools(log: (m: string) => void): Promise<void> {
  const install = (tool: (typeof CLUSTER_TOOLS)[number]) =>
    new Promise<void>((resolve, reject) => {
      if (existsSync(tool.bin)) return resolve();
      const gobin = path.join(ROOT, '.tools', 'gobin', path.basename(tool.bin));
      mkdirSync(gobin, { recursive: true });
      log(`building ${tool.module} into .tools/bin/${path.basename(tool.bin)} (first run only; takes minutes) ...`);
      const child = spawn('go', ['install', tool.module], {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, GOBIN: gobin, CGO_ENABLED: '0' },
      });
      child.on('exit', (code) => {
        if (code !== 0) return reject(new Error(`go install ${tool.module} failed (${code})`));
        renameSync(path.join(gobin, tool.installedAs), tool.bin);
        rmSync(gobin, { recursive: true, force: true });
        try {
          rmdirSync(path.dirname(gobin));
        } catch {
          /* another build still uses it */
        }
        resolve();
      });
    });
  const [server, sqlTool, ui] = CLUSTER_TOOLS;
  // The SQL tool reuses most of the server's compiled packages: build it second.
  await Promise.all([
    install(server).then(() => install(sqlTool)),
    install(ui).catch((err) =>
      log(`the Web UI could not be built (${(err as Error).message}); the cluster runs without it`),
    ),
    ensureTools({ temporal: true, s3: true }, log),
  ]);
}

/** Where Go keeps the server module's source: its SQL schema files live there. */
async function temporalSchemaDir(): Promise<string> {
  const { stdout } = await run('go', ['mod', 'download', '-json', `go.temporal.io/server@${TEMPORAL_SERVER_VERSION}`], {
    cwd: ROOT,
  });
  return path.join(JSON.parse(stdout).Dir as string, 'schema', 'postgresql', 'v12');
}

/** Postgres of the cluster: the application's server; Temporal's databases sit beside its own. */
function clusterDatabases() {
  const app = new URL(loadConfig().databaseUrl);
  const appUrl = new URL(app.toString());
  appUrl.pathname = '/postal_cluster';
  return {
    appUrl: appUrl.toString(),
    host: app.hostname,
    port: app.port || '5432',
    user: decodeURIComponent(app.username || 'postgres'),
    password: decodeURIComponent(app.password),
    temporal: 'temporal_cluster',
    visibility: 'temporal_cluster_visibility',
  };
}

/**
 * Creates Temporal's persistence and visibility databases and brings their schemas to the
 * server's version (`setup-schema -v 0.0` then `update-schema`; both are no-ops when done).
 */
async function setupTemporalDatabases(log: (m: string) => void): Promise<void> {
  const db = clusterDatabases();
  const schema = await temporalSchemaDir();
  const sql = (database: string, ...args: string[]) =>
    run(TEMPORAL_SQL_TOOL_BIN, [
      '--plugin',
      'postgres12',
      '--ep',
      db.host,
      '-p',
      db.port,
      '-u',
      db.user,
      ...(db.password ? ['--pw', db.password] : []),
      '--db',
      database,
      ...args,
    ]);
  for (const [database, dir] of [
    [db.temporal, 'temporal'],
    [db.visibility, 'visibility'],
  ] as const) {
    await sql(database, 'create-database');
    await sql(database, 'setup-schema', '-v', '0.0');
    await sql(database, 'update-schema', '-d', path.join(schema, dir, 'versioned'));
  }
  log(`Temporal schemas ready in ${db.temporal} and ${db.visibility}`);
}

/** The variables scripts/cluster/temporal/cluster.yaml reads, shared by all four services. */
function temporalServiceEnv(): Record<string, string> {
  const db = clusterDatabases();
  const p = CLUSTER_PORTS.temporal;
  return {
    TEMPORAL_DYNAMIC_CONFIG: path.join(ROOT, 'scripts', 'cluster', 'dynamicconfig.yaml'),
    TEMPORAL_LOG_LEVEL: 'warn',
    TEMPORAL_HISTORY_SHARDS: '4',
    TEMPORAL_DB: db.temporal,
    TEMPORAL_VISIBILITY_DB: db.visibility,
    TEMPORAL_PG_HOST: db.host,
    TEMPORAL_PG_PORT: db.port,
    TEMPORAL_PG_USER: db.user,
    TEMPORAL_PG_PASSWORD: db.password,
    TEMPORAL_FRONTEND_GRPC_PORT: String(p.frontend.grpc),
    TEMPORAL_FRONTEND_HTTP_PORT: String(p.frontend.http),
    TEMPORAL_FRONTEND_MEMBERSHIP_PORT: String(p.frontend.membership),
    TEMPORAL_HISTORY_GRPC_PORT: String(p.history.grpc),
    TEMPORAL_HISTORY_MEMBERSHIP_PORT: String(p.history.membership),
    TEMPORAL_MATCHING_GRPC_PORT: String(p.matching.grpc),
    TEMPORAL_MATCHING_MEMBERSHIP_PORT: String(p.matching.membership),
    TEMPORAL_WORKER_GRPC_PORT: String(p.worker.grpc),
    TEMPORAL_WORKER_MEMBERSHIP_PORT: String(p.worker.membership),
  };
}

function logFile(name: string): string {
  mkdirSync(DATA_DIR, { recursive: true });
  return path.join(DATA_DIR, `${name}.log`);
}

function startLogged(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  name: string,
  detached: boolean,
): ChildProcess {
  const out = openSync(logFile(name), 'a');
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', out, out], detached });
  if (detached) child.unref();
  return child;
}

/** Starts one Temporal service process (its own ports, a Prometheus endpoint of its own). */
function startTemporalService(
  name: TemporalServiceName,
  serviceEnv: Record<string, string>,
  detached: boolean,
): ChildProcess {
  const env = {
    ...process.env,
    ...serviceEnv,
    TEMPORAL_METRICS_ADDRESS: `127.0.0.1:${CLUSTER_PORTS.temporal[name].metrics}`,
  };
  const args = [
    '--root',
    ROOT,
    '--config',
    path.join('scripts', 'cluster', 'temporal'),
    '--env',
    'cluster',
    '--allow-no-auth',
    'start',
    '--service',
    name,
  ];
  return startLogged(TEMPORAL_SERVER_BIN, args, env, `temporal-${name}`, detached);
}

function temporalServiceRuns(state: Pick<ClusterState, 'services'>, name: TemporalServiceName): boolean {
  const argv = argvOf(state.services[name]?.pid);
  return !!argv && argv[0] === TEMPORAL_SERVER_BIN && argv[argv.indexOf('--service') + 1] === name;
}

const GRPC_NOT_FOUND = 5;

/**
 * The cluster serves: the frontend answers, a history shard answers a lookup (NotFound for
 * a workflow that does not exist) and matching describes a task queue.
 */
export async function clusterServes(address: string, namespace = CLUSTER_NAMESPACE): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: 2000 });
    const svc = connection.workflowService;
    const deadline = () => Date.now() + 3000;
    await connection.withDeadline(deadline(), () => svc.getSystemInfo({}));
    const history = await connection
      .withDeadline(deadline(), () =>
        svc.describeWorkflowExecution({ namespace, execution: { workflowId: 'cluster-health-probe' } }),
      )
      .then(
        () => true,
        (err: { code?: number }) => err.code === GRPC_NOT_FOUND,
      );
    if (!history) return false;
    await connection.withDeadline(deadline(), () =>
      svc.describeTaskQueue({ namespace, taskQueue: { name: 'cluster-health-probe' }, taskQueueType: 1 }),
    );
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

function frontendAnswers(address: string): Promise<boolean> {
  return run(TEMPORAL_BIN, ['operator', 'cluster', 'health', '--address', address], { timeout: 5000 }).then(
    () => true,
    () => false,
  );
}

/** Registers the namespace (if new) and exactly the search attributes the code declares. */
async function ensureNamespace(address: string, log: (m: string) => void): Promise<void> {
  const cli = (...args: string[]) => run(TEMPORAL_BIN, [...args, '--address', address], { timeout: 30000 });
  try {
    await cli('operator', 'namespace', 'describe', '--namespace', CLUSTER_NAMESPACE);
  } catch {
    await cli('operator', 'namespace', 'create', '--namespace', CLUSTER_NAMESPACE, '--retention', CLUSTER_RETENTION);
    log(`namespace ${CLUSTER_NAMESPACE} registered (retention ${CLUSTER_RETENTION})`);
  }
  const listed = async () =>
    Object.keys(
      JSON.parse(
        (await cli('operator', 'search-attribute', 'list', '--namespace', CLUSTER_NAMESPACE, '-o', 'json')).stdout,
      ).customAttributes ?? {},
    );
  // A new namespace reaches the frontend's namespace cache within seconds.
  await waitUntil(`namespace ${CLUSTER_NAMESPACE}`, () => listed().then(() => true), 60000);
  const wanted = SEARCH_ATTRIBUTE_REGISTRATIONS.map((r) => r.split('=') as [string, string]);
  const have = new Set(await listed());
  const missing = wanted.filter(([name]) => !have.has(name));
  if (missing.length) {
    await cli(
      'operator',
      'search-attribute',
      'create',
      '--namespace',
      CLUSTER_NAMESPACE,
      ...missing.flatMap(([name, type]) => ['--name', name, '--type', type]),
    );
    log(`search attributes registered: ${missing.map(([n]) => n).join(', ')}`);
  }
  await waitUntil(
    'the search attributes',
    async () => {
      const now = new Set(await listed());
      return wanted.every(([name]) => now.has(name));
    },
    30000,
  );
}

/** The environment of the profile's API, worker and SMTP processes. */
function appEnv(
  state: Pick<
    ClusterState,
    'frontendAddress' | 's3Endpoint' | 'stripeApiBase' | 'smtpUrl' | 'databaseUrl' | 'taskQueue'
  >,
): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: state.frontendAddress,
    TEMPORAL_NAMESPACE: CLUSTER_NAMESPACE,
    TEMPORAL_TASK_QUEUE: state.taskQueue,
    TEMPORAL_UI_URL: `http://127.0.0.1:${CLUSTER_PORTS.ui}`,
    S3_ENDPOINT: state.s3Endpoint,
    ...(state.stripeApiBase ? { STRIPE_API_BASE: state.stripeApiBase } : {}),
    ...(state.smtpUrl ? { SMTP_URL: state.smtpUrl } : {}),
    DATABASE_URL: state.databaseUrl,
    SMTP_PORT: String(CLUSTER_PORTS.smtp),
  };
}

function startApp(script: string, name: string, env: NodeJS.ProcessEnv, detached: boolean): ChildProcess {
  return startLogged(process.execPath, ['--import', 'tsx', script], env, name, detached);
}

async function pollsTaskQueue(address: string, taskQueue: string, pid: number): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 2000 });
  try {
    const res = await connection.workflowService.describeTaskQueue({
      namespace: CLUSTER_NAMESPACE,
      taskQueue: { name: taskQueue },
      taskQueueType: 1,
    });
    return (res.pollers ?? []).some((p) => (p.identity ?? '').startsWith(`${pid}@`));
  } finally {
    await connection.close();
  }
}

async function readyz(siteUrl: string): Promise<boolean> {
  return (await fetch(`${siteUrl}/readyz`, { signal: AbortSignal.timeout(5000) })).status === 200;
}

/**
 * Brings the cluster profile up, reusing every process of an earlier run that still runs
 * and restarting those that died. Returns the state and the processes started here.
 */
export async function ensureCluster(opts: ClusterOptions): Promise<{ state: ClusterState; started: ChildProcess[] }> {
  const started: ChildProcess[] = [];
  try {
    return { state: await bringUp(opts, started), started };
  } catch (err) {
    // A half-started profile is not left behind; the next run starts it again.
    await stopPids(
      started.filter((c) => c.exitCode === null).map((c) => c.pid!),
      20000,
    );
    throw err;
  }
}

async function bringUp(opts: ClusterOptions, started: ChildProcess[]): Promise<ClusterState> {
  const log = opts.log ?? ((m: string) => console.log(`[cluster] ${m}`));
  const previous = readClusterState();
  await ensureClusterTools(log);

  const frontendAddress = `127.0.0.1:${CLUSTER_PORTS.temporal.frontend.grpc}`;
  const serviceEnv = temporalServiceEnv();
  const down = TEMPORAL_SERVICES.filter((name) => !(previous && temporalServiceRuns(previous, name)));
  const services = Object.fromEntries(
    TEMPORAL_SERVICES.filter((name) => !down.includes(name)).map((name) => [name, previous!.services[name]]),
  ) as ClusterState['services'];
  // Recorded as each starts, so `npm run stack:stop` finds them even if a later step fails.
  const recorded: ClusterState = {
    frontendAddress,
    namespace: CLUSTER_NAMESPACE,
    uiUrl: '',
    serviceEnv,
    services,
    s3Endpoint: '',
    databaseUrl: '',
    taskQueue: CLUSTER_TASK_QUEUE,
    apis: previous?.apis ?? [],
    workers: previous?.workers ?? [],
    smtp: previous?.smtp,
    ui: previous?.ui,
  };
  const serviceChildren = new Map<TemporalServiceName, ChildProcess>();
  const start = (name: TemporalServiceName) => {
    const child = startTemporalService(name, serviceEnv, opts.detached);
    started.push(child);
    serviceChildren.set(name, child);
    services[name] = { pid: child.pid!, grpcPort: CLUSTER_PORTS.temporal[name].grpc };
    writeClusterState(recorded);
  };
  const exited = () => {
    const dead = [...serviceChildren].find(([, child]) => child.exitCode !== null || child.signalCode !== null);
    return dead && logFile(`temporal-${dead[0]}`);
  };
  if (down.length) {
    await setupTemporalDatabases(log);
    // On a new database every service's first start writes the cluster metadata record and
    // those that lose that race exit, so the first service starts alone until it serves.
    const [first, ...rest] = down;
    start(first);
    await waitUntil(
      `Temporal ${first}`,
      () => portOpen(CLUSTER_PORTS.temporal[first].grpc),
      120000,
      logFile(`temporal-${first}`),
      exited,
    );
    rest.forEach(start);
  }
  log(
    down.length
      ? `started Temporal ${down.join(', ')}; reused ${TEMPORAL_SERVICES.filter((s) => !down.includes(s)).join(', ') || 'nothing'}`
      : 'reusing the Temporal cluster',
  );
  await waitUntil(
    `the Temporal frontend at ${frontendAddress}`,
    () => frontendAnswers(frontendAddress),
    120000,
    logFile('temporal-frontend'),
    exited,
  );
  await ensureNamespace(frontendAddress, log);
  await waitUntil(
    'the Temporal cluster (history and matching)',
    () => clusterServes(frontendAddress),
    120000,
    logFile('temporal-history'),
    exited,
  );

  let ui = previous?.ui && runsWith(previous.ui.pid, TEMPORAL_UI_BIN) ? previous.ui : undefined;
  if (!ui && existsSync(TEMPORAL_UI_BIN)) {
    const env = {
      ...process.env,
      TEMPORAL_UI_TEMPORAL_ADDRESS: frontendAddress,
      TEMPORAL_UI_PORT: String(CLUSTER_PORTS.ui),
    };
    const child = startLogged(
      TEMPORAL_UI_BIN,
      ['--root', ROOT, '--config', path.join('scripts', 'cluster', 'ui'), '--env', 'cluster', 'start'],
      env,
      'temporal-ui',
      opts.detached,
    );
    started.push(child);
    ui = { pid: child.pid! };
    writeClusterState({ ...recorded, ui });
    await waitUntil('the Temporal Web UI', () => portOpen(CLUSTER_PORTS.ui), 30000, logFile('temporal-ui'));
  }

  // Object store, bucket, application database and its migrations (the migrate step).
  const config = loadConfig();
  const db = clusterDatabases();
  const { state: stack, children } = await ensureStack({
    profile: 'cluster',
    ports: {
      temporal: CLUSTER_PORTS.temporal.frontend.grpc,
      temporalUi: CLUSTER_PORTS.ui,
      s3: CLUSTER_PORTS.s3,
      stripe: CLUSTER_PORTS.stripe,
      smtp: CLUSTER_PORTS.mailSmtp,
      mailUi: CLUSTER_PORTS.mailUi,
    },
    databaseUrl: db.appUrl,
    temporalAddress: frontendAddress,
    s3Bucket: config.s3Bucket,
    s3AccessKeyId: config.s3AccessKeyId,
    s3SecretAccessKey: config.s3SecretAccessKey,
    s3Region: config.s3Region,
    detached: opts.detached,
    log,
  });
  started.push(...children);

  const state: ClusterState = {
    frontendAddress,
    namespace: CLUSTER_NAMESPACE,
    uiUrl: ui ? `http://127.0.0.1:${CLUSTER_PORTS.ui}` : '',
    serviceEnv,
    services,
    ui,
    s3Endpoint: stack.s3.endpoint,
    stripeApiBase: stack.stripe.apiBase,
    smtpUrl: stack.mail.smtpUrl,
    mailpitUrl: stack.mail.apiUrl,
    databaseUrl: db.appUrl,
    taskQueue: CLUSTER_TASK_QUEUE,
    apis: [],
    workers: [],
  };
  writeClusterState({ ...state, apis: recorded.apis, workers: recorded.workers, smtp: recorded.smtp });
  if (opts.apps) {
    Object.assign(state, await ensureApps(state, previous, opts.detached, started, log));
    writeClusterState(state);
  }
  return state;
}

/** Two workers, two APIs and the SMTP intake; each reused while it runs. */
async function ensureApps(
  state: ClusterState,
  previous: ClusterState | undefined,
  detached: boolean,
  started: ChildProcess[],
  log: (m: string) => void,
) {
  const env = appEnv(state);
  const workers = await Promise.all(
    [0, 1].map(async (i) => {
      const before = previous?.workers[i];
      if (before && runsWith(before.pid, 'worker/main.ts')) return before;
      const child = startApp('worker/main.ts', `worker-${i + 1}`, env, detached);
      started.push(child);
      // The first start bundles the workflows (tens of seconds on two busy cores).
      await waitUntil(
        `worker ${i + 1}`,
        () => pollsTaskQueue(state.frontendAddress, state.taskQueue, child.pid!),
        300000,
        logFile(`worker-${i + 1}`),
      );
      return { pid: child.pid! };
    }),
  );
  const apis = await Promise.all(
    CLUSTER_PORTS.apis.map(async (port, i) => {
      const siteUrl = `http://127.0.0.1:${port}`;
      const before = previous?.apis[i];
      if (before && runsWith(before.pid, 'api/server.ts') && (await readyz(siteUrl).catch(() => false))) return before;
      const child = startApp(
        'api/server.ts',
        `api-${i + 1}`,
        { ...env, PORT: String(port), SITE_URL: siteUrl },
        detached,
      );
      started.push(child);
      await waitUntil(`API ${i + 1} at ${siteUrl}`, () => readyz(siteUrl), 120000, logFile(`api-${i + 1}`));
      return { pid: child.pid!, siteUrl };
    }),
  );
  let smtp = previous?.smtp && runsWith(previous.smtp.pid, 'api/smtp/main.ts') ? previous.smtp : undefined;
  if (!smtp) {
    const child = startApp('api/smtp/main.ts', 'smtp', env, detached);
    started.push(child);
    await waitUntil('the SMTP intake', () => portOpen(CLUSTER_PORTS.smtp), 60000, logFile('smtp'));
    smtp = { pid: child.pid!, port: CLUSTER_PORTS.smtp };
  }
  log(
    `APIs ${apis.map((a) => a.siteUrl).join(', ')}, workers pids ${workers.map((w) => w.pid).join(', ')} on ${state.taskQueue}`,
  );
  return { apis, workers, smtp };
}

/** SIGKILL, as a crash would; resolves once the process is gone. */
async function killProcess(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
  await waitUntil(`pid ${pid} to exit`, async () => argvOf(pid) === null, 30000);
}

/** Kills one Temporal service with SIGKILL (a crash). */
export async function killTemporalService(name: TemporalServiceName): Promise<void> {
  const state = readClusterState();
  if (!state || !temporalServiceRuns(state, name))
    throw new Error(`Temporal ${name} of the cluster profile is not running`);
  await killProcess(state.services[name].pid);
}

/** Starts a fresh process of the service (detached) and records it; resolves once the cluster serves. */
export async function restartTemporalService(name: TemporalServiceName): Promise<void> {
  const state = readClusterState();
  if (!state) throw new Error('the cluster profile is not running');
  if (temporalServiceRuns(state, name))
    throw new Error(`Temporal ${name} still runs (pid ${state.services[name].pid})`);
  const child = startTemporalService(name, state.serviceEnv, true);
  state.services[name] = { pid: child.pid!, grpcPort: CLUSTER_PORTS.temporal[name].grpc };
  writeClusterState(state);
}

/** SIGTERM to each pid, then SIGKILL to those still running after `graceMs`. */
export async function stopPids(pids: number[], graceMs: number): Promise<void> {
  const alive = pids.filter((pid) => argvOf(pid) !== null);
  for (const pid of alive) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      /* already gone */
    }
  }
  const end = Date.now() + graceMs;
  while (Date.now() < end && alive.some((pid) => argvOf(pid) !== null)) await sleep(200);
  for (const pid of alive) {
    if (argvOf(pid) !== null)
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
  }
}

/**
 * Stops every process of the cluster profile that still runs what it was started as:
 * the applications first (they drain), then the UI and the Temporal services, then the
 * object store.
 */
export async function stopCluster(log: (m: string) => void = (m) => console.log(`[cluster] ${m}`)): Promise<void> {
  const state = readClusterState();
  if (!state) return;
  const apps = [
    ...state.apis.filter((a) => runsWith(a.pid, 'api/server.ts')).map((a) => a.pid),
    ...state.workers.filter((w) => runsWith(w.pid, 'worker/main.ts')).map((w) => w.pid),
    ...(state.smtp && runsWith(state.smtp.pid, 'api/smtp/main.ts') ? [state.smtp.pid] : []),
  ];
  await stopPids(apps, 40000);
  const temporal = [
    ...(state.ui && runsWith(state.ui.pid, TEMPORAL_UI_BIN) ? [state.ui.pid] : []),
    ...TEMPORAL_SERVICES.filter((name) => temporalServiceRuns(state, name)).map((name) => state.services[name].pid),
  ];
  await stopPids(temporal, 20000);
  stopStack('cluster');
  log(`stopped ${apps.length + temporal.length} processes and the object store`);
}
