// Shared set-up for the hostile-input tests: an app whose object store is a bucket of its
// own (so "no object was stored" can be counted exactly), row and object snapshots, the
// refusal shape the spec promises, and hostile strings.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3';
import { startTestApp, TestApp } from '../helpers/app';
import type { HttpResponse } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent } from '../helpers/agents';
import { insertMemberKey } from '../../services/accounts/accounts';

export interface HostileApp extends TestApp {
  bucket: string;
  objectKeys(): Promise<string[]>;
}

/** A funded member (100,000 cents) with one agent and a sandbox member key. */
export async function hostileMember(app: HostileApp) {
  const member = await newMember(app.deps, { creditsCents: 100000 });
  const agent = await newAgent(app.baseUrl, member.key);
  const testKey = (await insertMemberKey(app.deps.db, member.member_id, { name: 'sandbox', environment: 'test' })).key;
  return { memberId: member.member_id, key: member.key, agentId: agent.id as string, testKey };
}

export async function startHostileApp(env: Record<string, string> = {}): Promise<HostileApp> {
  const bucket = `hostile-${randomBytes(5).toString('hex')}`;
  const app = await startTestApp({
    env: { S3_BUCKET: bucket, RATE_LIMIT_PER_MINUTE: '1000000', SIGNUP_RATE_LIMIT_PER_MINUTE: '1000000', ...env },
  });
  const s3 = app.deps.storage.client;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const objectKeys = async () => {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
      keys.push(...(page.Contents ?? []).map((o) => o.Key!));
      token = page.NextContinuationToken;
    } while (token);
    return keys;
  };
  return {
    ...app,
    bucket,
    objectKeys,
    async close() {
      const keys = await objectKeys().catch(() => [] as string[]);
      for (let i = 0; i < keys.length; i += 1000) {
        await s3
          .send(
            new DeleteObjectsCommand({
              Bucket: bucket,
              Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })) },
            }),
          )
          .catch(() => undefined);
      }
      await s3.send(new DeleteBucketCommand({ Bucket: bucket })).catch(() => undefined);
      await app.close();
    },
  };
}

/**
 * Row counts of everything a request of this member could have written, plus stored
 * objects. Counts are scoped to the member: other test files write to the same database
 * at the same time. (Events are left out: workflows of earlier accepted requests publish them later.)
 */
export async function snapshot(app: HostileApp, memberId: string) {
  const [rows] = await app.deps.db.query(
    `SELECT (SELECT count(*) FROM outbound_mail WHERE member_id = $1)::int AS mail,
            (SELECT count(*) FROM batches WHERE member_id = $1)::int AS batches,
            (SELECT count(*) FROM credits_ledger WHERE member_id = $1)::int AS ledger,
            (SELECT COALESCE(sum(amount_cents), 0) FROM credits_ledger WHERE member_id = $1)::int AS balance,
            (SELECT count(*) FROM agents WHERE member_id = $1)::int AS agents,
            (SELECT count(*) FROM members WHERE id = $1)::int AS members`,
    [memberId],
  );
  // Pieces' print proofs are left out: the worker stores those of earlier accepted pieces at any time.
  return { ...rows, objects: (await app.objectKeys()).filter((k) => !/^mail\/[^/]+\/proof\.pdf$/.test(k)).length };
}

/**
 * The spec's refusal shapes: a 4xx (never 5xx) with a string `error` (or the nested
 * {error: {type, message, code}}); validation errors carry fields[] of {path, message};
 * 401/403 carry a reason; coded errors carry code and retryable.
 * Returns a description of what is wrong, or null.
 */
export function refusalProblem(res: HttpResponse, allowed: number[] = [400]): string | null {
  const raw: unknown = res.body;
  const show = `${res.status} ${typeof raw === 'string' ? raw.slice(0, 200) : JSON.stringify(raw)?.slice(0, 300)}`;
  const body = (typeof raw === 'object' ? raw : undefined) as Record<string, any> | undefined;
  if (!allowed.includes(res.status)) return `expected ${allowed.join('/')}, got ${show}`;
  // The spec's nested shape, e.g. agent_name_taken: {error: {type, message, code}}.
  if (body && typeof body.error === 'object' && body.error !== null) {
    const e = body.error;
    return typeof e.type === 'string' && typeof e.message === 'string' && typeof e.code === 'string'
      ? null
      : `a nested error without type/message/code: ${show}`;
  }
  if (!body || typeof body !== 'object' || typeof body.error !== 'string' || !body.error)
    return `no error message: ${show}`;
  if (body.fields !== undefined) {
    if (!Array.isArray(body.fields) || !body.fields.length) return `fields[] is empty: ${show}`;
    for (const f of body.fields)
      if (typeof f?.path !== 'string' || typeof f?.message !== 'string') return `a field without path/message: ${show}`;
  }
  if (res.status === 400 && body.fields === undefined && typeof body.code !== 'string')
    return `a 400 without fields[] or code: ${show}`;
  if (body.code !== undefined && typeof body.retryable !== 'boolean') return `a coded error without retryable: ${show}`;
  return null;
}

/** Strings that have broken other services: SQL, path traversal, template and script injection, control bytes. */
export const HOSTILE_STRINGS = [
  "'; DROP TABLE members; --",
  "' OR '1'='1",
  '1; SELECT pg_sleep(5)--',
  "Robert'); DELETE FROM credits_ledger;--",
  '$1',
  '%',
  '_',
  '\\',
  "\\'",
  '../../../../etc/passwd',
  '..\\..\\..\\windows\\win.ini',
  '/etc/passwd%00.pdf',
  'file:///etc/passwd',
  '${process.env.DATABASE_URL}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '\u0000',
  'a\u0000b',
  '\r\nX-Injected: 1',
  '\u202Egnp.exe',
  '\uFEFF',
  '\uD800',
  '𝕏🙂👨‍👩‍👧',
  ' ',
  '',
  'A'.repeat(10000),
  '__proto__',
  'constructor',
];

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RawAnswer {
  status?: number;
  body?: any;
  /** A socket error (a reset) or a close before the whole answer arrived. */
  error?: string;
  /** Every byte of the request was written. */
  sentAll: boolean;
}

/**
 * A POST over a plain TCP socket that writes the whole body (64 KiB at a time, chunked if
 * asked) whatever the server answers meanwhile, as a client on a real network may, and
 * resolves once the answer has arrived and the body is written (or the socket failed).
 * (Node's own HTTP client stops writing once an early answer has arrived, which would
 * hide a server that stops reading.)
 */
export function rawPost(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  opts: { chunked?: boolean } = {},
): Promise<RawAnswer> {
  const { hostname, port, pathname, search } = new URL(url);
  return new Promise((resolve) => {
    let received = Buffer.alloc(0);
    let sentAll = false;
    let answer: Omit<RawAnswer, 'sentAll'> | undefined;
    let failed: string | undefined;
    const settle = () => {
      if (failed !== undefined) resolve({ ...answer, error: failed, sentAll });
      else if (answer && sentAll) resolve({ ...answer, sentAll });
      else return;
      socket.destroy();
    };
    const socket = net.connect(Number(port), hostname, () => {
      const head = Object.entries({
        host: `${hostname}:${port}`,
        ...headers,
        ...(opts.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(body.length) }),
      })
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('');
      socket.write(`POST ${pathname}${search} HTTP/1.1\r\n${head}\r\n`);
      let offset = 0;
      const pump = () => {
        while (offset < body.length) {
          const chunk = body.subarray(offset, offset + 64 * 1024);
          offset += chunk.length;
          const framed = opts.chunked
            ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
            : chunk;
          if (!socket.write(framed)) return void socket.once('drain', pump);
        }
        if (opts.chunked) socket.write('0\r\n\r\n');
        socket.write('', () => {
          sentAll = true;
          settle();
        });
      };
      pump();
    });
    socket.on('data', (d: Buffer) => {
      received = Buffer.concat([received, d]);
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd < 0) return;
      const head = received.subarray(0, headEnd).toString('latin1');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (received.length < headEnd + 4 + length) return;
      const text = received.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      answer ??= { status: Number(head.split(' ')[1]), body: parsed };
      settle();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      failed ??= err.code ?? err.message;
      settle();
    });
    socket.on('close', () => {
      if (!answer || !sentAll) failed ??= 'closed before the exchange ended';
      settle();
    });
  });
}
