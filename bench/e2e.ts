// End to end, as an agent sees it: submit a letter (agent test key), advance it
// submitted -> ready -> mailed -> delivered through the sandbox, and wait until the
// agent's webhook receiver has all four events (mail.submitted, mail.ready, mail.mailed,
// mail.delivered) of that piece. Several pieces run at once (spread over the APIs, one
// API per piece); p50/p99 over all of them.
import { performance } from 'node:perf_hooks';
import type { BenchMetric } from './run';
import { BenchServices, metric, multipartLetter, onePageLetter, percentile, RECIPIENT } from './services';

const EVENTS = ['mail.submitted', 'mail.ready', 'mail.mailed', 'mail.delivered'];

export interface E2eBenchOptions {
  pieces?: number;
  concurrency?: number;
  log?: (m: string) => void;
}

export async function runEndToEndBench(s: BenchServices, opts: E2eBenchOptions = {}): Promise<BenchMetric[]> {
  const pieces = opts.pieces ?? 40;
  const concurrency = opts.concurrency ?? 4;
  const log = opts.log ?? (() => undefined);
  const pdf = await onePageLetter();
  const { body, contentType } = multipartLetter(pdf, { ...RECIPIENT, allow_duplicate: 'true' });
  const headers = { authorization: `Bearer ${s.agentTestKey}`, 'x-service-md-version': '1' };

  // Pieces waiting for their events: id -> event types seen, and the resolver of the wait.
  const waiting = new Map<string, { seen: Set<string>; done: () => void }>();
  const early = new Map<string, Set<string>>();
  s.receiver.onRequest = (r) => {
    const id = r.body.outbound_mail_id as string | undefined;
    if (!id) return;
    const w = waiting.get(id);
    const seen = w?.seen ?? early.get(id) ?? new Set<string>();
    seen.add(r.body.event_type);
    if (!w) early.set(id, seen);
    else if (EVENTS.every((e) => seen.has(e))) w.done();
  };

  const timings: number[] = [];
  let failures = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < pieces) {
        const base = s.apis[next++ % s.apis.length].baseUrl;
        const t0 = performance.now();
        try {
          const res = await fetch(`${base}/v1/mail`, {
            method: 'POST',
            headers: { ...headers, 'content-type': contentType },
            body,
          });
          const piece = (await res.json()) as { id: string };
          if (res.status !== 201) throw new Error(`submit: ${res.status} ${JSON.stringify(piece)}`);
          const all = new Promise<void>((resolve, reject) => {
            const seen = early.get(piece.id) ?? new Set<string>();
            early.delete(piece.id);
            const timer = setTimeout(
              () => reject(new Error(`piece ${piece.id}: only ${[...seen].join(', ')} after 60 s`)),
              60000,
            );
            const done = () => {
              clearTimeout(timer);
              resolve();
            };
            waiting.set(piece.id, { seen, done });
            if (EVENTS.every((e) => seen.has(e))) done();
          });
          for (let step = 0; step < 3; step++) {
            const adv = await fetch(`${base}/v1/test/mail/${piece.id}/advance`, { method: 'POST', headers });
            if (adv.status !== 200) throw new Error(`advance: ${adv.status} ${await adv.text()}`);
          }
          await all;
          waiting.delete(piece.id);
          timings.push(performance.now() - t0);
        } catch (err) {
          failures++;
          log(`e2e piece failed: ${(err as Error).message}`);
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  s.receiver.onRequest = null;
  timings.sort((a, b) => a - b);
  log(
    `e2e: ${timings.length} pieces in ${seconds.toFixed(1)} s, p50 ${percentile(timings, 50).toFixed(0)} ms, p99 ${percentile(timings, 99).toFixed(0)} ms, ${failures} failed`,
  );
  const bench = `e2e submit -> delivered -> 4 webhooks (c=${concurrency})`;
  return [
    metric(bench, 'p50', percentile(timings, 50), 'ms'),
    metric(bench, 'p99', percentile(timings, 99), 'ms'),
    metric(bench, 'pieces/s', timings.length / seconds, 'pieces/s'),
    metric(bench, 'failed pieces', failures, `of ${pieces}`, { text: '0', ok: failures === 0 }),
  ];
}
