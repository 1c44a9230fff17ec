// The bench's side of bench/counters-preload.cjs (BENCH_COUNT=1): asks a process for its
// running totals (SIGWINCH, then reads $BENCH_COUNTERS_DIR/<pid>.json once its seq moved on)
// and diffs two dumps into what a load window cost: Postgres statements by text and in
// all, transactions (BEGIN), new Postgres connections, Temporal client calls by method,
// HTTP requests and new connections by destination, and the S3 client's checksum and
// Expect headers.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface CounterDump {
  seq: number;
  pid: number;
  script: string;
  pg: { statements: Record<string, number>; connects: number };
  grpc: Record<string, number>;
  http: { requests: Record<string, number>; connections: Record<string, number>; headers: Record<string, number> };
}

export const COUNTERS_PRELOAD = path.join(__dirname, 'counters-preload.cjs');

export const countingEnabled = () => process.env.BENCH_COUNT === '1';

function read(file: string): CounterDump | null {
  try {
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as CounterDump) : null;
  } catch {
    return null; // being renamed into place
  }
}

/** The process's totals now (null when it does not count or does not answer within 5 s). */
export async function dumpCounters(dir: string, pid: number): Promise<CounterDump | null> {
  const file = path.join(dir, `${pid}.json`);
  const seq = read(file)?.seq ?? 0;
  try {
    process.kill(pid, 'SIGWINCH');
  } catch {
    return null;
  }
  const end = Date.now() + 5000;
  while (Date.now() < end) {
    const now = read(file);
    if (now && now.seq > seq) return now;
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}

const diffMap = (a: Record<string, number> | undefined, b: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(b)
      .map(([k, v]) => [k, v - (a?.[k] ?? 0)])
      .filter(([, v]) => (v as number) > 0),
  ) as Record<string, number>;

export interface CounterDelta {
  statements: Record<string, number>;
  statementsTotal: number;
  transactions: number;
  pgConnects: number;
  grpc: Record<string, number>;
  httpRequests: Record<string, number>;
  httpConnections: Record<string, number>;
  httpHeaders: Record<string, number>;
}

export function diffCounters(a: CounterDump | null, b: CounterDump): CounterDelta {
  const statements = diffMap(a?.pg.statements, b.pg.statements);
  return {
    statements,
    statementsTotal: Object.values(statements).reduce((x, y) => x + y, 0),
    transactions: Object.entries(statements)
      .filter(([sql]) => /^(BEGIN|START TRANSACTION)/i.test(sql))
      .reduce((x, [, n]) => x + n, 0),
    pgConnects: b.pg.connects - (a?.pg.connects ?? 0),
    grpc: diffMap(a?.grpc, b.grpc),
    httpRequests: diffMap(a?.http.requests, b.http.requests),
    httpConnections: diffMap(a?.http.connections, b.http.connections),
    httpHeaders: diffMap(a?.http.headers, b.http.headers),
  };
}

export interface MemoryDump {
  at: number;
  before: Record<string, number>;
  after: Record<string, number>;
  heapLimitMb: number;
  spacesAfterGc: Record<string, number>;
  /** The process's worker threads (the Temporal worker's workflow thread), each its own V8 heap. */
  threads?: Record<string, MemoryDump>;
}

/** The process's memory before and after a full collection, in MB (SIGURG; null when it does not count or does not answer). */
export async function dumpMemory(dir: string, pid: number): Promise<MemoryDump | null> {
  const file = path.join(dir, `${pid}.mem.json`);
  const sent = Date.now();
  try {
    process.kill(pid, 'SIGURG');
  } catch {
    return null;
  }
  const end = sent + 10_000;
  while (Date.now() < end) {
    try {
      const m = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as MemoryDump) : null;
      if (m && m.at >= sent) {
        // Worker threads look for the request once a second and collect their own heap.
        await new Promise((r) => setTimeout(r, 3000));
        const threads: Record<string, MemoryDump> = {};
        for (const f of readdirSync(dir).filter((n) => n.startsWith(`${pid}.thread-`) && n.endsWith('.mem.json'))) {
          const t = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as MemoryDump;
          if (t.at >= sent) threads[f.slice(`${pid}.`.length, -'.mem.json'.length)] = t;
        }
        return { ...m, threads };
      }
    } catch {
      /* being renamed into place */
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return null;
}

/** Per unit of work, largest first, for the log and the results. */
export function perUnit(m: Record<string, number>, units: number): Array<[string, number]> {
  return Object.entries(m)
    .map(([k, v]) => [k, v / units] as [string, number])
    .sort((x, y) => y[1] - x[1]);
}
