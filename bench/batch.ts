// Batch mail benchmark: a 10,000-row sandbox batch through the real HTTP API with the
// API and a Temporal worker running inside this process (test/helpers/app.ts
// startTestApp) against the stack bench/run.ts brings up. Measures the draft upload,
// confirm -> submitted (10,000 pieces generated in chunked activities), the two sandbox
// advances to completed, and the process's peak RSS (API + worker together).
import { performance } from 'node:perf_hooks';
import { startTestApp } from '../test/helpers/app';
import { client } from '../test/helpers/http';
import { newMember } from '../test/helpers/factories';
import { batchForm, pdf, recipientsCsv, testKeyFor } from '../test/integration/batch-helpers';
import type { BenchMetric } from './run';

export interface BatchBenchOptions {
  rows?: number;
  log?: (message: string) => void;
}

export async function runBatchBench(opts: BatchBenchOptions = {}): Promise<BenchMetric[]> {
  const rows = opts.rows ?? 10000;
  const log = opts.log ?? (() => undefined);
  const app = await startTestApp();
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 25);
  try {
    const api = client(app.baseUrl);
    const member = await newMember(app.deps);
    const key = await testKeyFor(app.deps, member.member_id);
    const csv = recipientsCsv(rows);
    const template = await pdf(1);
    log(`recipients CSV: ${rows} rows, ${(csv.length / 1024).toFixed(0)} KiB`);

    let t = performance.now();
    const created = await api('POST', '/v1/batch-mail', {
      key,
      form: batchForm(template, csv, { job_name: 'Benchmark' }),
    });
    const draftMs = performance.now() - t;
    if (created.status !== 201) throw new Error(`draft failed: ${created.status} ${JSON.stringify(created.body)}`);
    const id: string = created.body.batch.id;
    log(`draft ${id}: ${draftMs.toFixed(0)} ms`);

    t = performance.now();
    const confirmed = await api('POST', `/v1/batch-mail/${id}/confirm`, { key });
    const confirmMs = performance.now() - t;
    if (confirmed.status !== 200)
      throw new Error(`confirm failed: ${confirmed.status} ${JSON.stringify(confirmed.body)}`);
    for (;;) {
      const res = await api('GET', `/v1/batch-mail/${id}`, { key });
      if (res.body.batch.status === 'submitted') break;
      if (performance.now() - t > 120000) throw new Error(`batch still ${res.body.batch.status} after 120 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const submittedMs = performance.now() - t;
    log(`confirm -> submitted: ${submittedMs.toFixed(0)} ms`);

    t = performance.now();
    for (const expected of ['in_progress', 'completed']) {
      const res = await api('POST', `/v1/batch-mail/${id}/advance`, { key });
      if (res.body?.batch?.status !== expected)
        throw new Error(`advance gave ${res.status} ${JSON.stringify(res.body)}`);
    }
    const advanceMs = performance.now() - t;
    const [{ mailed }] = await app.deps.db.query(
      `SELECT count(*)::int AS mailed FROM batch_pieces WHERE batch_id = $1 AND status = 'mailed'`,
      [id],
    );
    if (mailed !== rows) throw new Error(`${mailed} of ${rows} pieces mailed`);
    log(`advance to completed: ${advanceMs.toFixed(0)} ms`);

    peakRss = Math.max(peakRss, process.memoryUsage().rss, process.resourceUsage().maxRSS * 1024);
    const mb = (b: number) => Math.round((b / 1048576) * 10) / 10;
    return [
      {
        bench: 'batch',
        metric: `draft from ${rows}-row CSV`,
        value: Math.round(draftMs),
        unit: 'ms',
        target: '< 2000',
        ok: draftMs < 2000,
      },
      { bench: 'batch', metric: 'confirm response', value: Math.round(confirmMs), unit: 'ms' },
      {
        bench: 'batch',
        metric: `confirm -> submitted (${rows} pieces)`,
        value: Math.round(submittedMs),
        unit: 'ms',
        target: '< 30000',
        ok: submittedMs < 30000,
      },
      { bench: 'batch', metric: 'advance submitted -> completed', value: Math.round(advanceMs), unit: 'ms' },
      { bench: 'batch', metric: 'peak RSS (API + worker in one process)', value: mb(peakRss), unit: 'MB' },
    ];
  } finally {
    clearInterval(sampler);
    await app.close();
  }
}
