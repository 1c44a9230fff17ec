// The API and the worker as separate child processes for the HTTP benches (so their peak
// memory can be read from /proc/<pid>/status VmHWM), one of each or, on the cluster
// profile, two of each (the load is spread over both APIs; both workers poll one task
// queue), a member with a high rate limit and an agent with live and test keys, a local
// webhook receiver, and the helpers the benches share: a fixed multipart letter,
// percentiles, a metric builder, the node flags of a bench child process (CPU profile,
// counters) and the marks of the load windows that profiles are cut to.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { mkdirSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { loadConfig } from '../config';
import { closeDeps, createDeps } from '../services/shared/create-deps';
import type { Deps } from '../services/shared/deps';
import { createMember, insertMemberKey } from '../services/accounts/accounts';
import { freePort } from '../scripts/stack';
import {
  ApiProcess,
  deleteSchedulesOf,
  ROOT,
  ServiceProcess,
  stackEnv,
  startApiProcess,
  startWorkerProcess,
} from '../test/faults/children';
import type { BenchMetric } from './run';
import { COUNTERS_PRELOAD, countingEnabled } from './counters';
import { WindowMarks } from './profiles';

export interface BenchServices {
  apis: ApiProcess[];
  workers: ServiceProcess[];
  /** A client-side view of the stack (Postgres, Temporal) on the services' task queue. */
  deps: Deps;
  taskQueue: string;
  memberId: string;
  agentId: string;
  memberKey: string;
  agentKey: string;
  agentTestKey: string;
  /** A test key of a second agent without a webhook, for load that should not fan out. */
  quietTestKey: string;
  receiver: Receiver;
  /** The environment the API and worker children run with (stack, task queue, keys). */
  env: Record<string, string | undefined>;
  /** Node flags for a bench child of this role: a CPU profile (BENCH_CPU_PROF=1) and the counters (BENCH_COUNT=1). */
  nodeArgs(role: string): string[];
  /** Where the children's counters are dumped (BENCH_COUNT=1). */
  countersDir: string;
  /** Load windows by name (monotonic clock), for cutting the CPU profiles. */
  marks: WindowMarks;
  /** Each worker's Prometheus endpoint (WORKER_METRICS_ADDRESS), e.g. for its workflow cache size. */
  workerMetricsUrls: string[];
  stop(): Promise<void>;
}

export interface ReceivedWebhook {
  at: number;
  eventId: string | undefined;
  body: Record<string, any>;
}

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  /** Called on every request, after it is recorded. */
  onRequest: ((r: ReceivedWebhook) => void) | null;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1 answering 200 at once, with keep-alive. */
export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = { url: '', received: [], onRequest: null, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, any> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        /* counted anyway */
      }
      const r = {
        at: Date.now(),
        eventId:
          (req.headers['x-service-event-id'] as string | undefined) ??
          (req.headers['webhook-id'] as string | undefined),
        body,
      };
      receiver.received.push(r);
      receiver.onRequest?.(r);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    });
  });
  server.keepAliveTimeout = 65000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

async function call(
  baseUrl: string,
  method: string,
  p: string,
  key: string,
  json?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${baseUrl}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
    body: json ? JSON.stringify(json) : undefined,
  });
  const body = await res.json().catch(() => undefined);
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${JSON.stringify(body)}`);
  return body as any;
}

/**
 * Starts the worker and the API as child processes against the stack described by this
 * process's environment (bench/run.ts sets it), as in production (an encryption key of its
 * own, LOG_LEVEL=info, BENCH_LOG_LEVEL overrides) except NODE_ENV=benchmark: the bench's
 * webhook receivers listen on 127.0.0.1, which needs WEBHOOKS_ALLOW_INSECURE_LOCAL, and
 * production refuses that flag.
 * BENCH_CPU_PROF=1 profiles both (node --cpu-prof) into bench/results/profiles/<run>/<role>/;
 * BENCH_COUNT=1 preloads bench/counters-preload.cjs into both.
 */
export async function startBenchServices(
  log: (m: string) => void,
  processes = 1,
  opts: { profileDir?: string } = {},
): Promise<BenchServices> {
  const taskQueue = `bench-services-${randomBytes(3).toString('hex')}`;
  const countersDir = path.join(ROOT, '.data', 'test', `bench-counters-${taskQueue}`);
  const env = stackEnv({
    NODE_ENV: 'benchmark',
    APP_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    TEMPORAL_TASK_QUEUE: taskQueue,
    ...(countingEnabled() ? { BENCH_COUNTERS_DIR: countersDir } : {}),
  });
  if (countingEnabled()) mkdirSync(countersDir, { recursive: true });
  const profileDir = opts.profileDir ?? path.join(ROOT, 'bench', 'results', 'profiles');
  const nodeArgs = (role: string) => {
    const args: string[] = [];
    if (process.env.BENCH_CPU_PROF === '1') {
      mkdirSync(path.join(profileDir, role), { recursive: true });
      args.push('--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, role)}`);
    }
    if (countingEnabled()) args.push('--require', COUNTERS_PRELOAD);
    return args;
  };

  const deps = await createDeps(loadConfig({ ...process.env, ...env } as NodeJS.ProcessEnv), {
    poolSize: 16,
    name: 'bench',
  });
  log(
    `starting ${processes} worker process(es) (each loads the run's workflow bundle, WORKFLOW_BUNDLE_PATH) and ${processes} API process(es) ...`,
  );
  const count = Array.from({ length: processes });
  const metricsPorts = await Promise.all(count.map(() => freePort()));
  const [workers, apis] = await Promise.all([
    Promise.all(
      count.map((_, i) =>
        startWorkerProcess(deps.temporal, {
          env: { ...env, WORKER_METRICS_ADDRESS: `127.0.0.1:${metricsPorts[i]}` },
          taskQueue,
          nodeArgs: nodeArgs(`worker${i || ''}`),
        }),
      ),
    ),
    Promise.all(count.map((_, i) => startApiProcess({ env, nodeArgs: nodeArgs(`api${i || ''}`) }))),
  ]);
  const api = apis[0];
  log(
    `APIs ${apis.map((a) => `pid ${a.proc.pid} at ${a.baseUrl}`).join(', ')}; workers pids ${workers.map((w) => w.pid).join(', ')} on ${taskQueue}`,
  );

  const member = await createMember(deps, {
    email: `bench-${randomBytes(4).toString('hex')}@example.test`,
    fullName: 'Bench Member',
    creditsCents: 100_000_000,
    rateLimitPerMinute: 10_000_000,
    returnAddress: { name: 'Bench Member', line1: '1 Return Way', city: 'Austin', state: 'TX', zip: '78701' },
  });
  await insertMemberKey(deps.db, member.member_id, { name: 'bench sandbox', environment: 'test' });
  const agent = await call(api.baseUrl, 'POST', '/v1/agents', member.key, {
    name: `bench-${randomBytes(3).toString('hex')}`,
  });
  const scopes = ['mail.send', 'agent.read', 'webhook.manage', 'webhook.read', 'billing.read'];
  const live = await call(api.baseUrl, 'POST', `/v1/agents/${agent.id}/credentials`, member.key, { scopes });
  const test = await call(api.baseUrl, 'POST', `/v1/agents/${agent.id}/credentials`, member.key, {
    scopes,
    environment: 'test',
  });
  const quiet = await call(api.baseUrl, 'POST', '/v1/agents', member.key, {
    name: `bench-quiet-${randomBytes(3).toString('hex')}`,
  });
  const quietTest = await call(api.baseUrl, 'POST', `/v1/agents/${quiet.id}/credentials`, member.key, {
    scopes,
    environment: 'test',
  });
  const receiver = await startReceiver();
  // Every event of the agent (live and sandbox) goes to the receiver.
  await call(
    api.baseUrl,
    'PUT',
    '/v1/webhooks/settings',
    live.key,
    { webhook_url: receiver.url, enabled: true, event_types: ['*'] },
    { 'x-service-md-version': '1' },
  );

  return {
    apis,
    workers,
    deps,
    taskQueue,
    receiver,
    env,
    nodeArgs,
    countersDir,
    marks: new WindowMarks(),
    workerMetricsUrls: metricsPorts.map((p) => `http://127.0.0.1:${p}/metrics`),
    memberId: member.member_id,
    agentId: agent.id,
    memberKey: member.key,
    agentKey: live.key,
    agentTestKey: test.key,
    quietTestKey: quietTest.key,
    async stop() {
      await Promise.all([...apis.map((a) => a.proc.stop()), ...workers.map((w) => w.stop())]);
      await receiver.close();
      await deleteSchedulesOf(deps.temporal, taskQueue);
      await closeDeps(deps);
      rmSync(countersDir, { recursive: true, force: true });
    },
  };
}

/** A real one-page PDF letter. */
export async function onePageLetter(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([612, 792]).drawText('Benchmark letter: one page.', { x: 72, y: 700, size: 12, font });
  return Buffer.from(await doc.save());
}

/** Digits that number a letter of uniqueLetters (fixed width: the PDF's offsets do not move). */
const LETTER_NUMBER_DIGITS = 9;

/**
 * A one-page PDF whose only text is "Benchmark letter <number>: one page.", written out
 * uncompressed with fixed-width numbers, so each letter of a run differs in what it shows
 * (its own document hash, proof and duplicate fingerprint) and is made by writing digits.
 */
function numberedLetterTemplate(): { pdf: Buffer; numberAt: number } {
  const marker = '#'.repeat(LETTER_NUMBER_DIGITS);
  const content = `BT /F1 12 Tf 72 700 Td (Benchmark letter ${marker}: one page.) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
  ];
  let out = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const o of offsets) out += `${String(o).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return { pdf: Buffer.from(out, 'latin1'), numberAt: out.indexOf(marker) };
}

/**
 * `count` multipart bodies, each a different one-page letter (numbered from `first`), made
 * before a load window so that making them costs the window nothing.
 */
export function uniqueLetters(
  count: number,
  fields: Record<string, string>,
  first = 0,
): { bodies: Buffer[]; contentType: string } {
  const { pdf, numberAt } = numberedLetterTemplate();
  const { body, contentType } = multipartLetter(pdf, fields);
  const at = body.indexOf(pdf) + numberAt;
  const bodies: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const b = Buffer.from(body);
    b.write(String(first + i).padStart(LETTER_NUMBER_DIGITS, '0'), at, 'latin1');
    bodies.push(b);
  }
  return { bodies, contentType };
}

export const RECIPIENT = {
  recipient_name: 'Jane Doe',
  recipient_line1: '123 Main St',
  recipient_city: 'Austin',
  recipient_state: 'TX',
  recipient_zip: '78701',
};

/** A multipart/form-data body with a fixed boundary (autocannon sends the same bytes every time). */
export function multipartLetter(pdf: Buffer, fields: Record<string, string>): { body: Buffer; contentType: string } {
  const boundary = `----bench${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="document"; filename="letter.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
    ),
  );
  parts.push(pdf, Buffer.from(`\r\n--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export const round1 = (n: number) => Math.round(n * 10) / 10;

export function metric(
  bench: string,
  name: string,
  value: number,
  unit: string,
  target?: { text: string; ok: boolean },
): BenchMetric {
  return { bench, metric: name, value: round1(value), unit, ...(target ? { target: target.text, ok: target.ok } : {}) };
}
