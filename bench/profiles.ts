// Profiles cut to the bench's load windows (BENCH_CPU_PROF=1). The benches mark each load
// window on the monotonic clock (WindowMarks; V8's profile timestamps use the same clock),
// so a child's whole-life `--cpu-prof` profile can be summarised for one window only:
// where the main JavaScript thread spent its samples, by owner (the package or project
// file nearest the leaf, so Node's internals count for whoever called them), by project
// function (inclusive) and as garbage collection and native time. For the windows given
// to PerfRecorder, Linux `perf` samples whole processes (every thread: the Temporal
// dev server, and the native threads of the Node processes that V8 does not see); its
// report is summarised by thread and library, and by Go package for the dev server.
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, openSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../scripts/stack';

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

export interface Window {
  name: string;
  startUs: number;
  endUs: number;
}

/** Named load windows on the monotonic clock, with hooks for profilers that follow them. */
export class WindowMarks {
  readonly windows: Window[] = [];
  private open = new Map<string, number>();
  onBegin: ((name: string, pids: Record<string, number>) => void) | null = null;
  onEnd: ((name: string) => Promise<void>) | null = null;

  begin(name: string, pids: Record<string, number> = {}): void {
    this.open.set(name, nowUs());
    this.onBegin?.(name, pids);
  }

  async end(name: string): Promise<void> {
    const startUs = this.open.get(name);
    if (startUs === undefined) return;
    this.open.delete(name);
    this.windows.push({ name, startUs, endUs: nowUs() });
    await this.onEnd?.(name);
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  window: string;
  /** Samples on the main thread in the window that were not idle. */
  busySamples: number;
  /** Shares (%) of the busy samples. */
  gc: number;
  program: number;
  byOwner: Array<[string, number]>;
  /** Inclusive (synchronous callers only: an await starts a new stack). */
  byProjectFunction: Array<[string, number]>;
  /** Every busy sample charged to the project function nearest the leaf (what asked for the work). */
  byNearestProjectFunction: Array<[string, number]>;
  topSelf: Array<[string, number]>;
  /** Shares (%) by what the work was for (PURPOSES), with garbage collection and native time apart. */
  byPurpose: Array<[string, number]>;
}

/** Who owns a frame: a package, a project file, or nothing (Node's internals, native, anonymous). */
function ownerOf(url: string): string | null {
  if (!url) return null;
  const clean = url.replace(/^file:\/\//, '');
  const nm = clean.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = clean.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (clean.startsWith(ROOT + '/')) return path.relative(ROOT, clean);
  return null;
}

const pct = (n: number, total: number) => Math.round((n / total) * 1000) / 10;

interface Frame {
  fn: string;
  owner: string | null;
}

const owned = (f: Frame, ...prefixes: string[]) => f.owner !== null && prefixes.some((p) => f.owner!.startsWith(p));
const anywhere = (frames: Frame[], test: (f: Frame) => boolean) => frames.some(test);
/** The first frame from the leaf that has an owner decides, unless a rule looks at the whole stack. */
const firstOwned = (frames: Frame[]) => frames.find((f) => f.owner !== null) ?? null;

/**
 * What a sample's work was for, from its stack (leaf first): the rules are tried in order.
 * Whole-stack rules come first (a signed URL's signing is presigning, not an upload).
 */
const PURPOSES: Array<[string, (frames: Frame[]) => boolean]> = [
  [
    'workflow thread: promise stack-trace tracking (SDK promise hook, prepareStackTrace, source maps)',
    (fr) =>
      anywhere(
        fr,
        (f) =>
          f.fn === 'initAll' ||
          f.fn === 'Error.prepareStackTrace' ||
          f.fn === 'formatCallsiteName' ||
          f.fn === 'cutoffStackTrace' ||
          owned(f, 'source-map'),
      ),
  ],
  [
    'workflow thread: module evaluation per workflow (webpack require)',
    (fr) => anywhere(fr, (f) => f.fn === '__webpack_require__'),
  ],
  ['workflow thread: entering the VM context (runInContext)', (fr) => fr[0]?.fn === 'runInContext'],
  [
    'workflow thread: workflow code and SDK in the bundle',
    (fr) => anywhere(fr, (f) => owned(f, 'workflow-bundle-') || (f.owner ?? '').startsWith('evalmachine')),
  ],
  [
    'S3 signed URLs (presign: SigV4 per URL)',
    (fr) =>
      anywhere(
        fr,
        (f) =>
          f.fn === 'getSignedUrl' ||
          f.fn === 'presign' ||
          owned(f, '@aws-sdk/s3-request-presigner') ||
          f.fn === 'signedUrl',
      ),
  ],
  [
    'S3 PutObject (SDK middleware, SigV4, CRC32, HTTP)',
    (fr) => owned(firstOwned(fr) ?? { fn: '', owner: null }, '@aws-sdk/', '@smithy/', '@aws-crypto/'),
  ],
  [
    'Postgres client (pg, TypeORM)',
    (fr) => owned(firstOwned(fr) ?? { fn: '', owner: null }, 'pg', 'typeorm', 'postgres-', 'bench/counters-preload'),
  ],
  [
    'Temporal client / worker SDK (gRPC, protobuf, core bridge, rxjs)',
    (fr) =>
      owned(
        firstOwned(fr) ?? { fn: '', owner: null },
        '@temporalio/',
        '@grpc/',
        'protobufjs',
        '@protobufjs/',
        'long',
        'rxjs',
      ),
  ],
  [
    'multipart parse (formidable, temp files)',
    (fr) =>
      anywhere(
        fr,
        (f) => owned(f, 'formidable', 'api/multipart.ts') || f.fn === 'removeUploads' || f.fn === 'readUpload',
      ),
  ],
  [
    'PDF inspection (pdf-lib, domain/outbound-mail/documents.ts)',
    (fr) => anywhere(fr, (f) => owned(f, 'pdf-lib', 'pako', '@pdf-lib/', 'domain/outbound-mail/documents.ts')),
  ],
  ['validation (zod)', (fr) => owned(firstOwned(fr) ?? { fn: '', owner: null }, 'zod')],
  [
    'logging and metrics (pino, prom-client)',
    (fr) =>
      owned(
        firstOwned(fr) ?? { fn: '', owner: null },
        'pino',
        'sonic-boom',
        'prom-client',
        'thread-stream',
        'api/metrics.ts',
        'worker/metrics.ts',
      ),
  ],
  [
    'HTTP server (Node http, Koa, router)',
    (fr) =>
      owned(
        firstOwned(fr) ?? { fn: '', owner: null },
        'koa',
        '@koa/',
        'raw-body',
        'co-body',
        'koa-body',
        'http-errors',
        'statuses',
        'on-finished',
        'content-type',
        'type-is',
      ) ||
      anywhere(
        fr,
        (f) => f.fn === 'parserOnHeadersComplete' || f.fn === 'parserOnIncoming' || f.fn === 'handleResponse',
      ),
  ],
  ['project code (api/, services/, domain/, activities/)', (fr) => (firstOwned(fr)?.owner ?? '').endsWith('.ts')],
  ['other packages', (fr) => firstOwned(fr) !== null],
];

/** Summarises one `--cpu-prof` profile over each window that has enough of its samples. */
export function summariseCpuProfile(file: string, windows: Window[], minSamples = 50): ProfileSummary[] {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const times: number[] = [];
  let t = p.startTime;
  for (const d of p.timeDeltas) times.push((t += d));

  const out: ProfileSummary[] = [];
  for (const w of windows) {
    const owners = new Map<string, number>();
    const projectFns = new Map<string, number>();
    const nearest = new Map<string, number>();
    const self = new Map<string, number>();
    const purposes = new Map<string, number>();
    const add = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
    let busy = 0;
    let gc = 0;
    let program = 0;
    for (let i = 0; i < p.samples.length; i++) {
      if (times[i] < w.startUs || times[i] > w.endUs) continue;
      const leaf = byId.get(p.samples[i])!;
      const name = leaf.callFrame.functionName;
      if (name === '(idle)') continue;
      busy++;
      if (name === '(garbage collector)') {
        gc++;
        add(purposes, 'garbage collection');
        continue;
      }
      if (name === '(program)') {
        program++;
        add(purposes, 'native, outside JavaScript ((program))');
        continue;
      }
      let owner: string | null = null;
      let near: string | null = null;
      const seen = new Set<string>();
      const outer: string[] = [];
      const frames: Frame[] = [];
      for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
        const f = byId.get(id)!.callFrame;
        const o = ownerOf(f.url);
        frames.push({ fn: f.functionName, owner: o ?? (f.url.startsWith('evalmachine') ? 'evalmachine' : null) });
        if (o && owner === null) owner = o;
        // Line numbers are the transpiled code's (tsx): the function and file name it.
        if (o && o.endsWith('.ts')) {
          const key = `${f.functionName || '(anonymous)'} (${o})`;
          near ??= key;
          if (!seen.has(key)) {
            seen.add(key);
            add(projectFns, key);
          }
        }
        if (f.functionName && outer.length < 12) outer.push(`${f.functionName}${o ? ` [${o}]` : ''}`);
      }
      add(
        owners,
        owner ??
          `node internals / native (${
            leaf.callFrame.url
              .replace(/^node:/, '')
              .split('/')
              .slice(0, 2)
              .join('/') || name
          })`,
      );
      // No project frame: the outermost frames say who started it (a socket read, a timer, the SDK's loop).
      add(nearest, near ?? `(no project frame) ${outer.slice(-4).reverse().join(' > ')}`);
      add(self, `${name || '(anonymous)'} [${ownerOf(leaf.callFrame.url) ?? (leaf.callFrame.url || 'native')}]`);
      add(
        purposes,
        PURPOSES.find(([, test]) => test(frames))?.[0] ??
          'Node internals without an owner (socket and stream I/O, microtask queue, timers)',
      );
    }
    if (busy < minSamples) continue;
    const top = (m: Map<string, number>, n: number) =>
      [...m.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, n)
        .map(([k, v]) => [k, pct(v, busy)] as [string, number]);
    out.push({
      window: w.name,
      busySamples: busy,
      gc: pct(gc, busy),
      program: pct(program, busy),
      byOwner: top(owners, 30),
      byProjectFunction: top(projectFns, 40),
      byNearestProjectFunction: top(nearest, 40),
      topSelf: top(self, 40),
      byPurpose: top(purposes, 40),
    });
  }
  return out;
}

/** Every `.cpuprofile` under dir/<role>/, summarised per window: role -> summaries. */
export function summariseProfileDir(dir: string, windows: Window[]): Record<string, ProfileSummary[]> {
  const out: Record<string, ProfileSummary[]> = {};
  if (!existsSync(dir)) return out;
  for (const role of readdirSync(dir)) {
    const roleDir = path.join(dir, role);
    let files: string[] = [];
    try {
      files = readdirSync(roleDir).filter((f) => f.endsWith('.cpuprofile'));
    } catch {
      continue;
    }
    // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile: thread 0 is the main thread, others are worker threads (the Temporal worker's workflow threads).
    for (const f of files) {
      const thread = Number(f.split('.')[4]);
      const label = thread === 0 ? role : `${role} (worker thread ${thread})`;
      (out[label] ??= []).push(...summariseCpuProfile(path.join(roleDir, f), windows));
    }
  }
  return out;
}

export function perfAvailable(): boolean {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface PerfSummary {
  window: string;
  process: string;
  samples: number;
  /** Shares (%) of the samples. */
  byThreadAndLibrary: Array<[string, number]>;
  byGoPackage?: Array<[string, number]>;
  topSymbols: Array<[string, number]>;
}

/** The Go package of a symbol such as `go.temporal.io/server/service/history.(*x).y` or `modernc.org/sqlite/lib.sqlite3VdbeExec`. */
function goPackage(sym: string): string {
  const slash = sym.lastIndexOf('/', sym.indexOf('(') >= 0 ? sym.indexOf('(') : sym.length);
  const dot = sym.indexOf('.', slash + 1);
  return dot > 0 ? sym.slice(0, dot) : sym;
}

/** `perf record` of whole processes during chosen windows (all threads, 199 Hz). */
export class PerfRecorder {
  private running = new Map<
    string,
    Array<{ child: ChildProcess; exited: Promise<void>; file: string; process: string }>
  >();
  readonly recorded: Array<{ window: string; process: string; file: string }> = [];

  constructor(
    private readonly dir: string,
    private readonly wanted: (window: string) => boolean,
  ) {}

  begin(window: string, pids: Record<string, number>): void {
    if (!this.wanted(window)) return;
    const list = Object.entries(pids).map(([name, pid]) => {
      const file = path.join(this.dir, `${window.replace(/[^\w=-]+/g, '_')}.${name}.perf.data`);
      const child = spawn('perf', ['record', '-F', '199', '-g', '-p', String(pid), '-o', file], {
        stdio: ['ignore', 'ignore', openSync(`${file}.log`, 'w')],
      });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      return { child, exited, file, process: name };
    });
    this.running.set(window, list);
  }

  async end(window: string): Promise<void> {
    const list = this.running.get(window);
    if (!list) return;
    this.running.delete(window);
    // A perf that ended early (its process exited) is not waited for; one that does not stop is killed after 30 s.
    await Promise.all(
      list.map(async ({ child, exited }) => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
      }),
    );
    for (const r of list) this.recorded.push({ window, process: r.process, file: r.file });
  }

  /** Summaries of everything recorded. */
  summarise(): PerfSummary[] {
    return this.recorded
      .filter((r) => existsSync(r.file))
      .map((r) => {
        const report = (sort: string, limit = '0.3') =>
          execFileSync(
            'perf',
            [
              'report',
              '-i',
              r.file,
              '--stdio',
              '--no-children',
              '-g',
              'none',
              '--sort',
              sort,
              '--percent-limit',
              limit,
            ],
            { encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'ignore'] },
          );
        const rows = (text: string) =>
          text
            .split('\n')
            .filter((l) => /^\s+\d+\.\d+%/.test(l))
            .map((l) => {
              const m = /^\s+(\d+\.\d+)%\s+(.*)$/.exec(l)!;
              return [m[2].replace(/\s+/g, ' ').trim(), Number(m[1])] as [string, number];
            });
        const header = report('comm,dso');
        const samples = Number(
          /# Samples: (\d+)/.exec(header)?.[1] ?? /of event '.*?'\n# Event count.*?(\d+)/.exec(header)?.[1] ?? 0,
        );
        const symbols = rows(report('sym', '0'));
        const summary: PerfSummary = {
          window: r.window,
          process: r.process,
          samples,
          byThreadAndLibrary: rows(header).slice(0, 15),
          topSymbols: symbols.slice(0, 30),
        };
        if (r.process === 'temporal') {
          const pkgs = new Map<string, number>();
          for (const [sym, share] of symbols) {
            const name = sym.replace(/^\[[.k]\]\s*/, '');
            const key = sym.startsWith('[k]') ? 'kernel' : goPackage(name);
            pkgs.set(key, (pkgs.get(key) ?? 0) + share);
          }
          summary.byGoPackage = [...pkgs.entries()]
            .sort((a, b) => b[1] - a[1])
            .slice(0, 25)
            .map(([k, v]) => [k, Math.round(v * 10) / 10]);
        }
        return summary;
      });
  }
}
