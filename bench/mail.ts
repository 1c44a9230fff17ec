// POST /v1/mail under load (autocannon) against the API process(es): a one-page PDF from an
// agent test key (an agent without a webhook, so the load does not fan out), at 1, 16 and 64 concurrent connections, as real submissions (record +
// workflow start) and as dry runs (no record, no workflow), so the difference shows what
// storing the piece and starting its workflow cost. Reports requests/s, p50/p95/p99
// latency and every error (connection errors, timeouts, non-2xx answers).
import autocannon from 'autocannon';
import type { BenchMetric } from './run';
import { BenchServices, metric, multipartLetter, onePageLetter, percentile, RECIPIENT } from './services';

export interface MailBenchOptions {
  durationSeconds?: number;
  concurrency?: number[];
  /** 'skip' runs only real submissions, 'only' only dry runs. */
  dryRun?: 'skip' | 'only';
  log?: (m: string) => void;
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
async function load(urls: string[], headers: Record<string, string>, body: Buffer, connections: number, durationSeconds: number): Promise<LoadResult> {
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const shares = urls.map((_, i) => Math.floor(connections / urls.length) + (i < connections % urls.length ? 1 : 0));
  const results = await Promise.all(urls.map((url, i) => ({ url, share: shares[i] })).filter((u) => u.share > 0).map(({ url, share }) =>
    new Promise<autocannon.Result>((resolve, reject) => {
      const instance = autocannon({ url, method: 'POST', headers, body, connections: share, duration: durationSeconds, timeout: 30 }, (err, res) => (err ? reject(err) : resolve(res)));
      instance.on('response', (_client, statusCode, _bytes, responseTime) => {
        latencies.push(responseTime);
        statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
      });
    })));
  latencies.sort((a, b) => a - b);
  return {
    requestsPerSecond: latencies.length / Math.max(...results.map((r) => r.duration)),
    p50: percentile(latencies, 50),
    p95: percentile(latencies, 95),
    p99: percentile(latencies, 99),
    total: latencies.length,
    errors: results.reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0),
    statuses,
  };
}

export async function runMailBench(s: BenchServices, opts: MailBenchOptions = {}): Promise<BenchMetric[]> {
  const duration = opts.durationSeconds ?? 10;
  const levels = opts.concurrency ?? [1, 16, 64];
  const log = opts.log ?? (() => undefined);
  const urls = s.apis.map((a) => `${a.baseUrl}/v1/mail`);
  const pdf = await onePageLetter();
  const metrics: BenchMetric[] = [];

  // Dry runs first: submissions leave a backlog of piece workflows that would load the worker.
  const modes = opts.dryRun === 'skip' ? [false] : opts.dryRun === 'only' ? [true] : [true, false];
  for (const dryRun of modes) {
    // The same letter every time: allow_duplicate keeps duplicate protection from refusing it.
    const { body, contentType } = multipartLetter(pdf, { ...RECIPIENT, allow_duplicate: 'true', ...(dryRun ? { dry_run: 'true' } : {}) });
    const headers = { authorization: `Bearer ${s.quietTestKey}`, 'x-service-md-version': '1', 'content-type': contentType };
    const name = dryRun ? 'mail dry_run' : 'mail submit';
    // Warm-up: JIT, connection pools, Temporal client channel.
    await load(urls, headers, body, 4, 2);
    for (const c of levels) {
      const r = await load(urls, headers, body, c, duration);
      log(`${name} c=${c}: ${r.requestsPerSecond.toFixed(1)} req/s, p50 ${r.p50} ms, p95 ${r.p95} ms, p99 ${r.p99} ms, ${r.total} requests, statuses ${JSON.stringify(r.statuses)}, errors ${r.errors}`);
      const bench = `${name} c=${c}`;
      metrics.push(
        metric(bench, 'requests/s', r.requestsPerSecond, 'req/s', dryRun && c === 16 ? { text: '>= 200', ok: r.requestsPerSecond >= 200 } : undefined),
        metric(bench, 'p50 latency', r.p50, 'ms'),
        metric(bench, 'p95 latency', r.p95, 'ms'),
        metric(bench, 'p99 latency', r.p99, 'ms', !dryRun && c === 16 ? { text: '< 150', ok: r.p99 < 150 } : undefined),
        metric(bench, 'requests answered', r.total, 'requests'),
        metric(bench, 'errors (non-2xx, timeouts, resets)', r.errors, 'errors', { text: '0', ok: r.errors === 0 }),
      );
    }
  }
  return metrics;
}
