// POST /v1/mail under load (autocannon) against the API process(es): a one-page PDF from an
// agent test key (an agent without a webhook, so the load does not fan out), at 1, 16 and 64 concurrent connections, as real submissions (record +
// workflow start) and as dry runs (no record, no workflow), so the difference shows what
// storing the piece and starting its workflow cost. Each twice: a different letter per
// request (made before the window; what users send: nothing is cached for it) and one letter
// over and over (a stored proof, a document already seen). Reports requests/s, p50/p95/p99
// latency and every error (connection errors, timeouts, non-2xx answers), and the CPU
// each answer cost (bench/cpu.ts): the API, worker and Temporal dev server (what the
// baseline's dev server, worker and client correspond to), and besides them the
// Postgres backends of the bench database and the object store. At c=16 a submission
// run is also divided by the baseline's c=16 (bench/baseline.ts): submissions/s ÷
// workflows/s, CPU per piece ÷ CPU per bare workflow, p99 ÷ p99. With BENCH_COUNT=1 it
// counts per piece what the API and worker asked of Postgres, Temporal and the object
// store (bench/counters.ts), and for every run it reads the Temporal history of a
// sample of the window's pieces (events by type) and samples what the bench database's
// backends wait on.
import autocannon from 'autocannon';
import { temporal } from '@temporalio/proto';
import type { BenchMetric } from './run';
import {
  BenchServices,
  metric,
  multipartLetter,
  onePageLetter,
  percentile,
  RECIPIENT,
  uniqueLetters,
} from './services';
import { CpuMeter, cpuPerUnit } from './cpu';
import { BASELINE_PROCESSES, baselineResults } from './baseline';
import { countingEnabled, CounterDelta, diffCounters, dumpCounters, perUnit } from './counters';
import { benchDetails } from './details';
import { outboundMailWorkflowId } from '../workflows/outbound-mail/contracts';

export interface MailBenchOptions {
  durationSeconds?: number;
  concurrency?: number[];
  /** 'skip' runs only real submissions, 'only' only dry runs. */
  dryRun?: 'skip' | 'only';
  /** Which letters: a different one per request ('unique'), the same one over and over ('repeated'), or both (default). */
  letters?: 'unique' | 'repeated' | 'both';
  log?: (m: string) => void;
  /** The Temporal dev server's and object store's pids (null: not known, left out). */
  stackPids?: { temporal: number | null; s3: number | null };
  /** The bench database, whose Postgres backends are accounted. */
  databaseName?: string;
}

interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p95: number;
  p99: number;
  total: number;
  errors: number;
  statuses: Record<string, number>;
}

/**
 * `connections` spread over the URLs (one autocannon per URL, all at once); latencies of
 * every answer are pooled, so the percentiles are over all requests.
 */
async function load(
  urls: string[],
  headers: Record<string, string>,
  body: Buffer | Buffer[],
  connections: number,
  durationSeconds: number,
): Promise<LoadResult & { bodiesReused: number }> {
  // A list of bodies is sent in turn, each once (one body per request until the list runs out).
  const bodies = Array.isArray(body) ? body : null;
  let next = 0;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const shares = urls.map((_, i) => Math.floor(connections / urls.length) + (i < connections % urls.length ? 1 : 0));
  const results = await Promise.all(
    urls
      .map((url, i) => ({ url, share: shares[i] }))
      .filter((u) => u.share > 0)
      .map(
        ({ url, share }) =>
          new Promise<autocannon.Result>((resolve, reject) => {
            const instance = autocannon(
              {
                url,
                method: 'POST',
                headers,
                ...(bodies
                  ? { requests: [{ setupRequest: (req) => ({ ...req, body: bodies[next++ % bodies.length] }) }] }
                  : { body: body as Buffer }),
                connections: share,
                duration: durationSeconds,
                timeout: 30,
              },
              (err, res) => (err ? reject(err) : resolve(res)),
            );
            instance.on('response', (_client, statusCode, _bytes, responseTime) => {
              latencies.push(responseTime);
              statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
            });
          }),
      ),
  );
  latencies.sort((a, b) => a - b);
  return {
    requestsPerSecond: latencies.length / Math.max(...results.map((r) => r.duration)),
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    total: latencies.length,
    errors: results.reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0),
    statuses,
    bodiesReused: bodies ? Math.max(0, next - bodies.length) : 0,
  };
}

/** Samples every 200 ms what the bench database's client backends are doing (state / wait event). */
function sampleBackends(s: BenchServices, databaseName: string) {
  const counts: Record<string, number> = {};
  let samples = 0;
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const rows: Array<{ what: string; n: number }> = await s.deps.db
        .query(
          `SELECT coalesce(state, '?') || CASE WHEN wait_event_type IS NULL THEN '' ELSE ' / ' || wait_event_type || ':' || wait_event END AS what, count(*)::int AS n
           FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid() GROUP BY 1`,
          [databaseName],
        )
        .catch(() => []);
      for (const r of rows) counts[r.what] = (counts[r.what] ?? 0) + r.n;
      samples++;
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return async () => {
    stopped = true;
    await done;
    return Object.fromEntries(
      Object.entries(counts)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, Math.round((v / Math.max(samples, 1)) * 100) / 100]),
    );
  };
}

const EVENT_TYPE = temporal.api.enums.v1.EventType;

/** Event counts by type, averaged over the histories of up to `sample` pieces created in the window. */
async function historyPerPiece(
  s: BenchServices,
  from: Date,
  to: Date,
  sample = 20,
): Promise<{ pieces: number; events: Record<string, number> }> {
  const rows: Array<{ id: string }> = await s.deps.db.query(
    `SELECT id FROM outbound_mail WHERE created_at BETWEEN $1 AND $2 ORDER BY random() LIMIT $3`,
    [from, to, sample],
  );
  const events: Record<string, number> = {};
  for (const { id } of rows) {
    const history = await s.deps.temporal.workflow.getHandle(outboundMailWorkflowId(id)).fetchHistory();
    for (const e of history.events ?? []) {
      const name = (EVENT_TYPE[e.eventType ?? 0] ?? String(e.eventType)).replace(/^EVENT_TYPE_/, '');
      events[name] = (events[name] ?? 0) + 1;
    }
  }
  const n = Math.max(rows.length, 1);
  return { pieces: rows.length, events: Object.fromEntries(Object.entries(events).map(([k, v]) => [k, v / n])) };
}

/** Workflows started in the window, by type (the pieces' and anything else, e.g. schedules and dispatchers). */
async function workflowsStarted(s: BenchServices, from: Date, to: Date): Promise<Record<string, number>> {
  const byType: Record<string, number> = {};
  const query = `StartTime BETWEEN "${from.toISOString()}" AND "${to.toISOString()}"`;
  for await (const w of s.deps.temporal.workflow.list({ query })) byType[w.type] = (byType[w.type] ?? 0) + 1;
  return byType;
}

export async function runMailBench(s: BenchServices, opts: MailBenchOptions = {}): Promise<BenchMetric[]> {
  const duration = opts.durationSeconds ?? 10;
  const levels = opts.concurrency ?? [1, 16, 64];
  const log = opts.log ?? (() => undefined);
  const urls = s.apis.map((a) => `${a.baseUrl}/v1/mail`);
  const pdf = await onePageLetter();
  const metrics: BenchMetric[] = [];

  // The API stands where the baseline's client stood: API + worker + dev server is what a piece costs against a bare workflow.
  const apiNames = s.apis.map((_, i) => (i ? `api${i + 1}` : 'api'));
  const workerNames = s.workers.map((_, i) => (i ? `worker${i + 1}` : 'worker'));
  const pids: Record<string, number | null> = {
    ...Object.fromEntries(s.apis.map((a, i) => [apiNames[i], a.proc.pid])),
    ...Object.fromEntries(s.workers.map((w, i) => [workerNames[i], w.pid])),
    temporal: opts.stackPids?.temporal ?? null,
    s3: opts.stackPids?.s3 ?? null,
  };
  const meter = new CpuMeter({ pids, db: s.deps.db, databaseName: opts.databaseName });
  const counted = [...apiNames, ...workerNames, ...(pids.temporal ? ['temporal'] : [])];
  const countedLabel = `API + worker${pids.temporal ? ' + dev server' : ''}`;
  const childPids = [...s.apis.map((a) => a.proc.pid), ...s.workers.map((w) => w.pid)];
  const roleOf = (pid: number) => (s.apis.some((a) => a.proc.pid === pid) ? 'api' : 'worker');

  // Dry runs first: submissions leave a backlog of piece workflows that would load the worker.
  const modes = opts.dryRun === 'skip' ? [false] : opts.dryRun === 'only' ? [true] : [true, false];
  const kinds: Array<'unique' | 'repeated'> =
    opts.letters === 'unique' ? ['unique'] : opts.letters === 'repeated' ? ['repeated'] : ['unique', 'repeated'];
  // Letter numbers run on across windows (and start at random, since the object store outlives a run).
  let nextLetter = Math.floor(Math.random() * 500_000_000);
  const headersFor = (contentType: string) => ({
    authorization: `Bearer ${s.quietTestKey}`,
    'x-service-md-version': '1',
    'content-type': contentType,
  });
  for (const dryRun of modes)
    for (const kind of kinds) {
      const fields = {
        ...RECIPIENT,
        // The same letter every time: allow_duplicate keeps duplicate protection from refusing it.
        // Different letters need no such flag: duplicate protection runs as for any user.
        ...(kind === 'repeated' ? { allow_duplicate: 'true' } : {}),
        ...(dryRun ? { dry_run: 'true' } : {}),
      };
      // Enough different letters for the fastest window seen (dry runs ~1,000/s), made before it starts.
      const perWindow = Math.ceil(duration * (dryRun ? 1500 : 300));
      const letters = (count: number) => {
        const made = uniqueLetters(count, fields, nextLetter);
        nextLetter += count;
        return made;
      };
      const repeated = multipartLetter(pdf, fields);
      const headers = headersFor(repeated.contentType);
      const name = `mail ${dryRun ? 'dry_run' : 'submit'} (${kind === 'unique' ? 'unique letters' : 'one letter'})`;
      // Warm-up: JIT, connection pools, Temporal client channel.
      if (kind === 'unique') {
        const warm = letters(2000);
        await load(urls, headersFor(warm.contentType), warm.bodies, 4, 2);
      } else await load(urls, headers, repeated.body, 4, 2);
      for (const c of levels) {
        const made = kind === 'unique' ? letters(perWindow) : null;
        const body = made ? made.bodies : repeated.body;
        const windowHeaders = made ? headersFor(made.contentType) : headers;
        const bench = `${name} c=${c}`;
        const before = await meter.settled();
        const countersBefore = countingEnabled()
          ? await Promise.all(childPids.map((pid) => dumpCounters(s.countersDir, pid)))
          : [];
        const from = new Date();
        const stopSampling = opts.databaseName ? sampleBackends(s, opts.databaseName) : async () => ({});
        const stopTracking = meter.track();
        s.marks.begin(
          bench,
          Object.fromEntries(Object.entries(pids).filter((e): e is [string, number] => e[1] !== null)),
        );
        const r = await load(urls, windowHeaders, body, c, duration);
        if (r.bodiesReused) log(`${name} c=${c}: the letters ran out; ${r.bodiesReused} requests repeated one`);
        await s.marks.end(bench);
        const to = new Date();
        const backends = await stopSampling();
        // Work the window left behind (workflow tasks, activities) is waited for, however long;
        // how long it took says how far the processes fell behind the answers.
        const windowEnd = Date.now();
        const after = await meter.settled({ maxMs: Math.max(15_000, 2 * duration * 1000) });
        const catchUpSeconds = (Date.now() - windowEnd) / 1000;
        await stopTracking();
        const d = meter.delta(before, after);
        const answered = Object.entries(r.statuses)
          .filter(([code]) => code.startsWith('2'))
          .reduce((n, [, v]) => n + v, 0);
        const cpu = cpuPerUnit(d, Math.max(answered, 1), counted);
        const sum = (names: string[]) => names.reduce((t, n) => t + (cpu.byProcess[n] ?? 0), 0);
        const extra = cpu.byProcess.postgres + (cpu.byProcess.s3 ?? 0);

        log(
          `${bench}: ${r.requestsPerSecond.toFixed(1)} req/s, p50 ${r.p50} ms, p95 ${r.p95} ms, p99 ${r.p99} ms, ${r.total} requests, statuses ${JSON.stringify(r.statuses)}, errors ${r.errors}`,
        );
        log(
          `${bench}: CPU ${cpu.total.toFixed(2)} ms per answer (${countedLabel}: API ${sum(apiNames).toFixed(2)}, worker ${sum(workerNames).toFixed(2)}, dev server ${(cpu.byProcess.temporal ?? NaN).toFixed(2)}); ` +
            `besides: Postgres backends ${cpu.byProcess.postgres.toFixed(2)}, object store ${(cpu.byProcess.s3 ?? NaN).toFixed(2)}; machine ${(d.machineBusyShare * 100).toFixed(0)} % busy; ` +
            `near idle ${catchUpSeconds.toFixed(1)} s after the window; backends (avg count) ${JSON.stringify(backends)}`,
        );
        metrics.push(
          metric(
            bench,
            'requests/s',
            r.requestsPerSecond,
            'req/s',
            dryRun && c === 16
              ? kind === 'unique'
                ? { text: '>= 300', ok: r.requestsPerSecond >= 300 }
                : { text: '>= 200', ok: r.requestsPerSecond >= 200 }
              : undefined,
          ),
          metric(bench, 'p50 latency', r.p50, 'ms'),
          metric(bench, 'p95 latency', r.p95, 'ms'),
          metric(
            bench,
            'p99 latency',
            r.p99,
            'ms',
            c !== 16
              ? undefined
              : dryRun
                ? kind === 'unique'
                  ? { text: '< 100', ok: r.p99 < 100 }
                  : undefined
                : { text: '< 150', ok: r.p99 < 150 },
          ),
          metric(bench, 'requests answered', r.total, 'requests'),
          metric(bench, 'errors (non-2xx, timeouts, resets)', r.errors, 'errors', { text: '0', ok: r.errors === 0 }),
          metric(bench, `CPU per answer (${countedLabel})`, cpu.total, 'ms'),
          metric(bench, 'CPU per answer: API', sum(apiNames), 'ms'),
          metric(bench, 'CPU per answer: worker', sum(workerNames), 'ms'),
          ...(pids.temporal ? [metric(bench, 'CPU per answer: dev server', cpu.byProcess.temporal, 'ms')] : []),
          metric(bench, 'CPU per answer: Postgres backends (not in the total)', cpu.byProcess.postgres, 'ms'),
          ...(pids.s3
            ? [metric(bench, 'CPU per answer: object store (not in the total)', cpu.byProcess.s3, 'ms')]
            : []),
          metric(bench, 'CPU per answer, all of the above', cpu.total + extra, 'ms'),
          metric(bench, 'machine busy during the window', d.machineBusyShare * 100, '%'),
          metric(bench, 'processes near idle again after the window', catchUpSeconds, 's'),
          // What the processes kept up with: answers over the window and the catch-up after it.
          metric(
            bench,
            'pieces finished per second (answers / (window + catch-up))',
            answered / (duration + catchUpSeconds),
            'pieces/s',
          ),
        );
        const details: Record<string, unknown> = {
          cpuMsPerAnswer: cpu.byProcess,
          machineBusyShare: d.machineBusyShare,
          backendsWaiting: backends,
          answered,
        };

        if (countingEnabled()) {
          const countersAfter = await Promise.all(childPids.map((pid) => dumpCounters(s.countersDir, pid)));
          const byRole: Record<string, CounterDelta> = {};
          childPids.forEach((pid, i) => {
            const b = countersAfter[i];
            if (!b) return;
            const delta = diffCounters(countersBefore[i] ?? null, b);
            const role = roleOf(pid);
            const into = byRole[role];
            if (!into) {
              byRole[role] = delta;
              return;
            }
            for (const key of ['statements', 'grpc', 'httpRequests', 'httpConnections', 'httpHeaders'] as const) {
              for (const [k, v] of Object.entries(delta[key])) into[key][k] = (into[key][k] ?? 0) + v;
            }
            into.statementsTotal += delta.statementsTotal;
            into.transactions += delta.transactions;
            into.pgConnects += delta.pgConnects;
          });
          const units = Math.max(answered, 1);
          const counts: Record<string, unknown> = {};
          for (const [role, delta] of Object.entries(byRole)) {
            const grpcCalls = Object.values(delta.grpc).reduce((a, b) => a + b, 0);
            const httpCalls = Object.values(delta.httpRequests).reduce((a, b) => a + b, 0);
            const httpConnections = Object.values(delta.httpConnections).reduce((a, b) => a + b, 0);
            metrics.push(
              metric(bench, `${role}: Postgres statements per answer`, delta.statementsTotal / units, 'statements'),
              metric(bench, `${role}: Postgres transactions per answer`, delta.transactions / units, 'transactions'),
              metric(bench, `${role}: Temporal client calls per answer`, grpcCalls / units, 'calls'),
              metric(bench, `${role}: HTTP requests per answer (object store)`, httpCalls / units, 'requests'),
              metric(bench, `${role}: new HTTP connections per answer`, httpConnections / units, 'connections'),
            );
            counts[role] = {
              statements: perUnit(delta.statements, units),
              statementsTotal: delta.statementsTotal / units,
              transactions: delta.transactions / units,
              pgConnects: delta.pgConnects,
              grpc: perUnit(delta.grpc, units),
              httpRequests: perUnit(delta.httpRequests, units),
              httpConnections: perUnit(delta.httpConnections, units),
              httpHeaders: perUnit(delta.httpHeaders, units),
            };
            log(
              `${bench}: ${role} per answer: ${(delta.statementsTotal / units).toFixed(2)} Postgres statements in ${(delta.transactions / units).toFixed(2)} transactions, ` +
                `Temporal calls ${JSON.stringify(perUnit(delta.grpc, units).map(([k, v]) => `${k} ${v.toFixed(2)}`))}, HTTP ${JSON.stringify(perUnit(delta.httpRequests, units).map(([k, v]) => `${k} ${v.toFixed(2)}`))}, ` +
                `new connections ${JSON.stringify(delta.httpConnections)}, S3 headers ${JSON.stringify(perUnit(delta.httpHeaders, units).map(([k, v]) => `${k} ${v.toFixed(2)}`))}`,
            );
            for (const [sql, n] of perUnit(delta.statements, units).slice(0, 40)) log(`    ${n.toFixed(2)}  ${sql}`);
          }
          details.counts = counts;
        }

        if (!dryRun) {
          const history = await historyPerPiece(s, from, to);
          const started = await workflowsStarted(s, from, to);
          details.historyPerPiece = history;
          details.workflowsStarted = started;
          const ev = (k: string) => history.events[k] ?? 0;
          log(
            `${bench}: history per piece (${history.pieces} sampled): ${JSON.stringify(Object.fromEntries(Object.entries(history.events).map(([k, v]) => [k, Math.round(v * 100) / 100])))}; workflows started in the window: ${JSON.stringify(started)}`,
          );
          metrics.push(
            metric(
              bench,
              'history events per piece (sampled)',
              Object.values(history.events).reduce((a, b) => a + b, 0),
              'events',
            ),
            metric(bench, 'workflow tasks per piece', ev('WORKFLOW_TASK_COMPLETED'), 'tasks'),
            metric(bench, 'activity tasks per piece', ev('ACTIVITY_TASK_SCHEDULED'), 'activities'),
            metric(bench, 'local activities per piece (markers)', ev('MARKER_RECORDED'), 'markers'),
            metric(bench, 'search attribute upserts per piece', ev('UPSERT_WORKFLOW_SEARCH_ATTRIBUTES'), 'upserts'),
            metric(bench, 'timers per piece', ev('TIMER_STARTED'), 'timers'),
            metric(
              bench,
              'workflows started per piece (all types)',
              Object.values(started).reduce((a, b) => a + b, 0) / Math.max(answered, 1),
              'workflows',
            ),
          );
        }
        benchDetails[bench] = details;

        const base = baselineResults.get(c);
        if (!dryRun && base) {
          const vs = `${bench} vs baseline c=${c}`;
          const throughput = r.requestsPerSecond / base.workflowsPerSecond;
          const cpuRatio = cpu.total / base.cpuMsPerWorkflow;
          const p99Ratio = r.p99 / base.p99;
          log(
            `${vs}: submissions/s ÷ workflows/s ${throughput.toFixed(2)} (${r.requestsPerSecond.toFixed(1)} / ${base.workflowsPerSecond.toFixed(1)}), ` +
              `CPU per piece ÷ CPU per bare workflow ${cpuRatio.toFixed(2)} (${cpu.total.toFixed(2)} / ${base.cpuMsPerWorkflow.toFixed(2)} ms; ${countedLabel} vs ${BASELINE_PROCESSES.join(' + ')}), ` +
              `p99 ÷ p99 ${p99Ratio.toFixed(2)} (${r.p99} / ${base.p99.toFixed(1)} ms)`,
          );
          metrics.push(
            {
              bench: vs,
              metric: 'submissions/s ÷ baseline workflows/s',
              value: Math.round(throughput * 100) / 100,
              unit: 'x',
              target: '>= 0.5',
              ok: throughput >= 0.5,
            },
            {
              bench: vs,
              metric: `CPU per piece ÷ CPU per bare workflow (${countedLabel} vs dev server + worker + client)`,
              value: Math.round(cpuRatio * 100) / 100,
              unit: 'x',
            },
            {
              bench: vs,
              metric: 'p99 ÷ baseline p99',
              value: Math.round(p99Ratio * 100) / 100,
              unit: 'x',
              target: '<= 2',
              ok: p99Ratio <= 2,
            },
          );
        }
      }
    }
  return metrics;
}
