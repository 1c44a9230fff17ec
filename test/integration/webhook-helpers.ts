// Local webhook receivers and data set-up shared by the webhook integration tests.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Deps } from '../../services/shared/deps';
import { generateKey, hashKey, keyPrefixOf } from '../../domain/accounts/keys';
import { insertMemberKey } from '../../services/accounts/accounts';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface Answer {
  status: number;
  body?: string;
  delayMs?: number;
  headers?: Record<string, string>;
}
export type Reply = (req: Received, n: number) => Answer | Promise<Answer>;

/** An HTTP receiver on 127.0.0.1 that records every request and answers with `reply`. */
export async function startReceiver(reply: Reply = () => ({ status: 200, body: 'ok' })) {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  let handler = reply;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const r: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(r);
      waiters.splice(0).forEach((w) => w());
      const answer = await handler(r, received.length);
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(answer.body ?? '');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    setReply(next: Reply) {
      handler = next;
    },
    async waitFor(count: number, timeoutMs = 30000) {
      const until = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > until) throw new Error(`receiver got ${received.length} of ${count} requests`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200).unref();
        });
      }
      return received;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers a verification challenge; anything else with 200. */
export const answerChallenges: Reply = (r) => {
  const body = JSON.parse(r.body || '{}');
  if (body.event_type === 'webhook.endpoint_verification')
    return { status: 200, body: JSON.stringify({ challenge: body.data.challenge }) };
  return { status: 200, body: '{"ok":true}' };
};

export async function newAgentRow(deps: Deps, memberId: string): Promise<string> {
  const [row] = await deps.db.query(`INSERT INTO agents (member_id, name) VALUES ($1, $2) RETURNING id`, [
    memberId,
    `agent-${randomBytes(4).toString('hex')}`,
  ]);
  return row.id;
}

export async function newAgentKey(
  deps: Deps,
  memberId: string,
  agentId: string,
  environment: 'live' | 'test',
  scopes: string[],
): Promise<string> {
  const key = generateKey(environment === 'test' ? 'agent_test' : 'agent');
  await deps.db.query(
    `INSERT INTO agent_credentials (agent_id, member_id, key_hash, key_prefix, scopes, environment) VALUES ($1, $2, $3, $4, $5, $6)`,
    [agentId, memberId, hashKey(key), keyPrefixOf(key), scopes, environment],
  );
  return key;
}

export async function newMemberTestKey(deps: Deps, memberId: string): Promise<string> {
  return (await insertMemberKey(deps.db, memberId, { name: 'test', environment: 'test' })).key;
}

export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`condition not met in time; last value ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const MD = { 'x-service-md-version': '1' };
