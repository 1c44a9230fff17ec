// CPU accounting for the benches from /proc: a process's user + system time
// (/proc/<pid>/stat utime + stime, in clock ticks of 10 ms), sampled before and after a
// load window, per named process (API, worker, Temporal dev server, object store, this
// process) and for the Postgres backends serving the bench database (found through
// pg_stat_activity). The end sample is taken once the processes have settled (their
// CPU rate fell to near idle), so work a window leaves behind (workflow tasks of the
// last pieces) is counted with it. Also finds the process listening on a TCP port, for
// a Temporal dev server or object store the bench did not start itself.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { DataSource } from 'typeorm';

/** Linux's USER_HZ: /proc times are in 1/100 s on every architecture Node runs on. */
const TICK_MS = 10;

/** utime + stime of a process in ms, or null when it is gone. */
export function processCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** The pid of the process with a listening TCP socket on this port (IPv4 or IPv6), if this user can see it. */
export function pidListeningOn(port: number): number | null {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const localPort = parseInt(cols[1].split(':').pop()!, 16);
      if (localPort === port && cols[3] === '0A') inodes.add(cols[9]); // 0A: LISTEN
    }
  }
  if (!inodes.size) return null;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${entry}/fd/${fd}`));
        if (m && inodes.has(m[1])) return Number(entry);
      } catch {
        /* closed meanwhile */
      }
    }
  }
  return null;
}

/** Machine-wide busy and total time from /proc/stat (all CPUs), in ticks. */
export function machineTicks(): { busy: number; total: number } {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = cpu[3] + (cpu[4] ?? 0); // idle + iowait
  const total = cpu.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

export interface CpuSnapshot {
  at: number;
  /** ms of CPU per named process (null: not running). */
  processes: Record<string, number | null>;
  /** ms of CPU per Postgres backend pid of the bench database. */
  postgres: Map<number, number>;
  machine: { busy: number; total: number };
}

export interface CpuDelta {
  seconds: number;
  /** ms of CPU per named process over the window. */
  processes: Record<string, number>;
  /**
   * ms of CPU of the bench database's Postgres backends: every backend seen at a snapshot
   * in between (track()), to the last time it was seen; one that started in the window
   * counts from 0 (its start-up is part of the cost).
   */
  postgres: number;
  /** Share of the whole machine busy over the window (all processes, all users). */
  machineBusyShare: number;
}

export interface CpuMeterOptions {
  /** Named processes to account (missing pids are skipped). */
  pids: Record<string, number | null | undefined>;
  /** The bench database: its backends are accounted as `postgres`. */
  db?: DataSource;
  databaseName?: string;
}

export class CpuMeter {
  /** Postgres backend pid -> the CPU ms it had when last seen (backends come and go with the pools). */
  private lastSeen = new Map<number, number>();

  constructor(private readonly opts: CpuMeterOptions) {}

  /** Looks at the Postgres backends every 250 ms until the returned stop is called, so short-lived ones are counted. */
  track(): () => Promise<void> {
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        await this.postgresBackends().catch(() => undefined);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();
    return async () => {
      stopped = true;
      await loop;
    };
  }

  get names(): string[] {
    return Object.entries(this.opts.pids)
      .filter(([, pid]) => pid)
      .map(([name]) => name);
  }

  private async postgresBackends(): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    if (!this.opts.db || !this.opts.databaseName) return out;
    const rows: Array<{ pid: number }> = await this.opts.db.query(
      `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`,
      [this.opts.databaseName],
    );
    for (const { pid } of rows) {
      const ms = processCpuMs(pid);
      if (ms !== null) {
        out.set(pid, ms);
        this.lastSeen.set(pid, ms);
      }
    }
    // Backends that ended since: their last reading stands.
    return new Map([...this.lastSeen, ...out]);
  }

  async snapshot(): Promise<CpuSnapshot> {
    const processes: Record<string, number | null> = {};
    for (const [name, pid] of Object.entries(this.opts.pids)) if (pid) processes[name] = processCpuMs(pid);
    return { at: Date.now(), processes, postgres: await this.postgresBackends(), machine: machineTicks() };
  }

  delta(a: CpuSnapshot, b: CpuSnapshot): CpuDelta {
    const processes: Record<string, number> = {};
    for (const name of Object.keys(b.processes)) {
      const before = a.processes[name];
      const after = b.processes[name];
      if (before !== null && before !== undefined && after !== null) processes[name] = after - before;
    }
    let postgres = 0;
    for (const [pid, after] of b.postgres) postgres += after - (a.postgres.get(pid) ?? 0);
    const total = b.machine.total - a.machine.total;
    return {
      seconds: (b.at - a.at) / 1000,
      processes,
      postgres,
      machineBusyShare: total > 0 ? (b.machine.busy - a.machine.busy) / total : 0,
    };
  }

  /**
   * Waits until the accounted processes are near idle (together under `idleShare` of one
   * core over 500 ms), at most `maxMs`, and returns the snapshot taken then.
   */
  async settled(opts: { idleShare?: number; maxMs?: number } = {}): Promise<CpuSnapshot> {
    const idleShare = opts.idleShare ?? 0.1;
    const end = Date.now() + (opts.maxMs ?? 15_000);
    let last = await this.snapshot();
    for (;;) {
      await new Promise((r) => setTimeout(r, 500));
      const now = await this.snapshot();
      const d = this.delta(last, now);
      const busyMs = Object.values(d.processes).reduce((a, b) => a + b, 0) + d.postgres;
      if (busyMs / (d.seconds * 1000) < idleShare || Date.now() > end) return now;
      last = now;
    }
  }
}

/** CPU ms per unit of work, per process and summed over `counted` (the processes that make up the ratio). */
export function cpuPerUnit(
  d: CpuDelta,
  units: number,
  counted: string[],
): { total: number; byProcess: Record<string, number> } {
  const byProcess: Record<string, number> = {};
  for (const [name, ms] of Object.entries(d.processes)) byProcess[name] = ms / units;
  byProcess.postgres = d.postgres / units;
  const total = counted.reduce((sum, name) => sum + (byProcess[name] ?? 0), 0);
  return { total, byProcess };
}
