// Webhook fan-out: 10,000 events published through services/webhooks/events.ts publishEvent (which
// records each event, inserts its deliveries and wakes the receiver's dispatcher workflow)
// for the bench agent, whose webhook is a local receiver; the worker process signs and sends them.
// Measures publishing (events/s) and delivery (from the first publish until the receiver
// holds all 10,000 events: deliveries/s), and checks every event arrived.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { publishEvent } from '../services/webhooks/events';
import type { BenchMetric } from './run';
import { BenchServices, metric } from './services';

export interface WebhookBenchOptions {
  events?: number;
  publishConcurrency?: number;
  timeoutSeconds?: number;
  log?: (m: string) => void;
}

export async function runWebhookFanOutBench(s: BenchServices, opts: WebhookBenchOptions = {}): Promise<BenchMetric[]> {
  const total = opts.events ?? 10000;
  const concurrency = opts.publishConcurrency ?? 16;
  const log = opts.log ?? (() => undefined);
  const runId = randomUUID().slice(0, 8);

  const ids = new Set<string>();
  let lastAt = 0;
  let allReceived: () => void = () => undefined;
  const received = new Promise<void>((resolve) => {
    allReceived = resolve;
  });
  s.receiver.onRequest = (r) => {
    if (r.body.bench_run !== runId || !r.eventId) return;
    ids.add(r.eventId);
    lastAt = performance.now();
    if (ids.size === total) allReceived();
  };

  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const n = next++;
        const objectId = randomUUID();
        await publishEvent(s.deps, {
          eventKey: `bench:${runId}:${n}`,
          memberId: s.memberId,
          agentId: s.agentId,
          eventType: 'mail.submitted',
          testMode: true,
          objectType: 'outbound_mail',
          objectId,
          payload: {
            event_type: 'mail.submitted',
            outbound_mail_id: objectId,
            agent_id: s.agentId,
            status: 'submitted',
            test_mode: true,
            bench_run: runId,
            sequence: n,
          },
        });
      }
    }),
  );
  const publishedSeconds = (performance.now() - started) / 1000;
  log(`published ${total} events in ${publishedSeconds.toFixed(1)} s; waiting for the deliveries ...`);

  const timeoutMs = (opts.timeoutSeconds ?? 900) * 1000;
  const timer = setTimeout(() => allReceived(), timeoutMs);
  const progress = setInterval(() => log(`  ${ids.size} of ${total} events received`), 10000);
  await received;
  clearTimeout(timer);
  clearInterval(progress);
  s.receiver.onRequest = null;

  const deliveredSeconds = ((ids.size === total ? lastAt : performance.now()) - started) / 1000;
  const [{ failed }] = await s.deps.db.query(
    `SELECT count(*)::int AS failed FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE e.event_key LIKE $1 AND d.status = 'failed'`,
    [`bench:${runId}:%`],
  );
  log(
    `received ${ids.size} of ${total} in ${deliveredSeconds.toFixed(1)} s (${(ids.size / deliveredSeconds).toFixed(0)} deliveries/s), ${failed} failed`,
  );
  const bench = `webhook fan-out of ${total} events`;
  return [
    metric(bench, 'publish (record + deliveries + dispatcher wake-up)', total / publishedSeconds, 'events/s'),
    metric(bench, 'all delivered after', deliveredSeconds, 's', {
      text: '< 60',
      ok: ids.size === total && deliveredSeconds < 60,
    }),
    metric(bench, 'deliveries/s', ids.size / deliveredSeconds, 'deliveries/s'),
    metric(bench, `not received within ${timeoutMs / 60000} min of publishing`, total - ids.size, 'events', {
      text: '0',
      ok: ids.size === total,
    }),
    metric(bench, 'deliveries failed', failed, 'deliveries', { text: '0', ok: failed === 0 }),
  ];
}
