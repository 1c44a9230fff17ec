// Records every response the API server of a test answers, whoever asked (the http() helper,
// raw fetch, the MCP SDK, Chromium): method, path, status, content type and, for JSON, the
// body as sent. scripts/test.ts names the directory (CONTRACT_RECORD_DIR); each Jest worker
// appends to a file of its own, and test/contract/teardown.ts validates every record against
// the OpenAPI document when the run ends. Without CONTRACT_RECORD_DIR nothing is recorded.
import { appendFileSync, mkdirSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import path from 'node:path';

/** Bodies larger than this are counted but not validated (the largest JSON answer is the OpenAPI document). */
export const MAX_RECORDED_BYTES = 4 * 1024 * 1024;

export interface ResponseRecord {
  method: string;
  /** Path and query as requested. */
  url: string;
  status: number;
  content_type: string | null;
  bytes: number;
  /** The body text, for JSON content types within MAX_RECORDED_BYTES. */
  body?: string;
  truncated?: boolean;
  /** The test file and test name that were running when the answer finished. */
  test?: string;
  test_name?: string;
}

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json\b/i;

function currentTest(): { test?: string; test_name?: string } {
  const state = (
    globalThis as { expect?: { getState?: () => { testPath?: string; currentTestName?: string } } }
  ).expect?.getState?.();
  if (!state) return {};
  return {
    test: state.testPath ? path.relative(path.join(__dirname, '..', '..'), state.testPath) : undefined,
    test_name: state.currentTestName,
  };
}

/** Wraps the server's request listener so that every finished response is appended to the run's records. */
export function recordResponses(server: Server): void {
  const dir = process.env.CONTRACT_RECORD_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `responses-${process.pid}.jsonl`);
  const listeners = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    capture(req, res, file);
    for (const listener of listeners) listener.call(server, req, res);
  });
}

function capture(req: IncomingMessage, res: ServerResponse, file: string): void {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let truncated = false;
  const keep = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    const buf = Buffer.isBuffer(chunk)
      ? chunk
      : typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk as Uint8Array);
    bytes += buf.length;
    if (bytes > MAX_RECORDED_BYTES) truncated = true;
    else chunks.push(buf);
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.write = ((...args: unknown[]) => {
    keep(args[0], args[1]);
    return write(...args);
  }) as typeof res.write;
  res.end = ((...args: unknown[]) => {
    keep(args[0], args[1]);
    return end(...args);
  }) as typeof res.end;
  res.once('finish', () => {
    const contentType = (res.getHeader('content-type') as string | undefined) ?? null;
    const record: ResponseRecord = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      status: res.statusCode,
      content_type: contentType,
      bytes,
      ...currentTest(),
    };
    if (truncated) record.truncated = true;
    else if (contentType && JSON_TYPE.test(contentType) && req.method !== 'HEAD')
      record.body = Buffer.concat(chunks).toString('utf8');
    try {
      appendFileSync(file, `${JSON.stringify(record)}\n`);
    } catch {
      // The run's directory is gone (the run ended while a server was still answering): nothing to add to.
    }
  });
}
