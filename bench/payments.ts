// Stripe fulfilment: 500 Checkout Sessions of the bench member, each session's
// checkout.session.completed event signed as Stripe signs it and delivered twice at once
// (1,000 deliveries) to the API process's POST /webhooks/stripe; the worker process
// applies them. Measures accepting (deliveries/s until every delivery was answered 200)
// and fulfilment (deliveries/s from the first delivery until every event is applied), and
// checks the ledger: exactly one top-up of the session's amount per session.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import Stripe from 'stripe';
import type { BenchMetric } from './run';
import { BenchServices, metric } from './services';
import { localSessionObject, stripeEventBody } from '../services/billing/local-checkout';

export interface PaymentBenchOptions {
  sessions?: number;
  concurrency?: number;
  timeoutSeconds?: number;
  log?: (m: string) => void;
}

export async function runPaymentBench(s: BenchServices, opts: PaymentBenchOptions = {}): Promise<BenchMetric[]> {
  const sessions = opts.sessions ?? 500;
  const concurrency = opts.concurrency ?? 16;
  const log = opts.log ?? (() => undefined);
  const runId = randomUUID().slice(0, 8);
  const amount = 1234;
  const site = s.apis[0].siteUrl;
  // Only for signing (generateTestHeaderString); it calls no API.
  const stripe = new Stripe(s.deps.config.stripe.secretKey);
  const secret = s.deps.config.stripe.webhookSecret;

  const purchases = await s.deps.db.query(
    `INSERT INTO credit_purchases (member_id, stripe_session_id, requested_cents)
     SELECT $1, 'cs_bench_' || $2 || '_' || n, $3 FROM generate_series(1, $4) AS n
     RETURNING id, member_id, stripe_session_id, requested_cents`,
    [s.memberId, runId, amount, sessions],
  );
  const events = purchases.map((p: { stripe_session_id: string; member_id: string; requested_cents: number }) => {
    const id = `evt_bench_${runId}_${p.stripe_session_id}`;
    const body = stripeEventBody(
      'checkout.session.completed',
      localSessionObject({ ...p, customer_id: null }, `pi_bench_${p.stripe_session_id}`, 'paid'),
      id,
    );
    return { id, body };
  });
  const post = async (body: string) => {
    const res = await fetch(`${site}/webhooks/stripe`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload: body, secret }),
      },
      body,
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
  };

  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < events.length) {
        const e = events[next++];
        await Promise.all([post(e.body), post(e.body)]);
      }
    }),
  );
  const accepted = performance.now();
  log(`payments: ${events.length * 2} deliveries answered in ${((accepted - started) / 1000).toFixed(1)} s`);

  const ids = events.map((e: { id: string }) => e.id);
  const deadline = Date.now() + (opts.timeoutSeconds ?? 300) * 1000;
  for (;;) {
    const [row] = await s.deps.db.query(
      `SELECT count(*)::int AS n FROM stripe_events WHERE id = ANY($1) AND processed_at IS NOT NULL`,
      [ids],
    );
    if (row.n === ids.length) break;
    if (Date.now() > deadline) throw new Error(`payments: ${row.n} of ${ids.length} events applied in time`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const applied = performance.now();

  const [ledger] = await s.deps.db.query(
    `SELECT count(*)::int AS n, COALESCE(sum(amount_cents), 0)::bigint AS total FROM credits_ledger
      WHERE entry_key LIKE $1`,
    [`stripe:session:cs_bench_${runId}_%`],
  );
  const exact = ledger.n === sessions && Number(ledger.total) === sessions * amount;
  if (!exact)
    throw new Error(`payments: ledger has ${ledger.n} top-ups totalling ${ledger.total}, not ${sessions} of ${amount}`);
  log(`payments: ${sessions} sessions credited once each (${ledger.n} top-ups, ${ledger.total} cents)`);

  const deliveries = events.length * 2;
  return [
    metric(
      'payments',
      'webhook deliveries accepted (2 per event, at once)',
      deliveries / ((accepted - started) / 1000),
      'deliveries/s',
    ),
    metric(
      'payments',
      'events fulfilled (first delivery to last ledger entry)',
      deliveries / ((applied - started) / 1000),
      'events/s',
    ),
    metric('payments', 'top-ups in the ledger (one per session)', ledger.n, 'entries', {
      text: `= ${sessions} (total ${sessions * amount} cents)`,
      ok: exact,
    }),
  ];
}
