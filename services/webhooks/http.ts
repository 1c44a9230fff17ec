// The one HTTP client that calls webhook receivers (worker only), and the one that reads
// OAuth client ID metadata documents (API; fetchPublicDocument). It checks the URL,
// resolves the host and refuses non-public addresses (then connects to the address it
// checked, so a second DNS answer cannot redirect it), never follows redirects, gives
// each attempt a hard deadline, and reads at most 4 KiB of a webhook's response (a
// document's own bound for documents) before destroying the socket.
import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import {
  isLoopbackAddress,
  isLoopbackHost,
  isPublicAddress,
  parseIp,
  webhookUrlProblem,
  WebhookUrlKind,
} from '../../domain/webhooks/urls';

export const ATTEMPT_DEADLINE_MS = 10_000;
export const MAX_RESPONSE_BYTES = 4096;

export interface ResolvedAddress {
  address: string;
  family: number;
}
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

export interface AddressCheck {
  ok: boolean;
  addresses: ResolvedAddress[];
  error?: string;
}

/**
 * The URL rules plus DNS: every address the host resolves to must be public, or, for a
 * loopback URL allowed by WEBHOOKS_ALLOW_INSECURE_LOCAL, a loopback address.
 */
export async function checkWebhookTarget(
  url: string,
  kind: WebhookUrlKind,
  allowInsecureLocal: boolean,
  resolve: Resolver = systemResolver,
): Promise<AddressCheck> {
  const problem = webhookUrlProblem(url, kind, allowInsecureLocal);
  if (problem) return { ok: false, addresses: [], error: `url_refused: URL ${problem}` };
  const hostname = new URL(url).hostname;
  const host = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  let addresses: ResolvedAddress[];
  const literal = parseIp(host);
  if (literal) {
    addresses = [{ address: host, family: literal.length === 4 ? 4 : 6 }];
  } else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      return {
        ok: false,
        addresses: [],
        error: `dns_error: ${(err as { code?: string }).code ?? (err as Error).message}`,
      };
    }
    if (!addresses.length) return { ok: false, addresses, error: `dns_error: ${host} has no address` };
  }
  if (allowInsecureLocal && isLoopbackHost(host)) {
    if (addresses.some((a) => !isLoopbackAddress(a.address))) {
      return { ok: false, addresses, error: `address_refused: ${host} resolves to an address that is not loopback` };
    }
  } else if (addresses.some((a) => !isPublicAddress(a.address))) {
    return {
      ok: false,
      addresses,
      error: `address_refused: ${host} resolves to a private, loopback, link-local or metadata address`,
    };
  }
  return { ok: true, addresses };
}

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  kind: WebhookUrlKind;
  allowInsecureLocal: boolean;
  deadlineMs?: number;
  resolve?: Resolver;
}

export interface SendResult {
  /** 2xx within the deadline. */
  ok: boolean;
  statusCode: number | null;
  responseTimeMs: number;
  error: string | null;
  /** The first 4 KiB of the response body (UTF-8, possibly cut mid-character). */
  body: string;
}

/** A lookup that answers with the address that was checked, whatever the host name. */
function pinnedLookupOf(pinned: ResolvedAddress): LookupFunction {
  return (_host, options, callback) => {
    const cb = callback as (...args: unknown[]) => void;
    if ((options as { all?: boolean }).all) cb(null, [pinned]);
    else cb(null, pinned.address, pinned.family);
  };
}

export interface DocumentRequest {
  url: string;
  allowInsecureLocal: boolean;
  maxBytes: number;
  deadlineMs: number;
  accept?: string;
  resolve?: Resolver;
}

export type DocumentResult =
  | { ok: true; statusCode: number; body: Buffer; cacheControl: string | null; contentType: string | null }
  | { ok: false; error: string };

/**
 * GETs a small public document under the agent-webhook address rules (public https, any
 * port; loopback http with WEBHOOKS_ALLOW_INSECURE_LOCAL): no redirects, a deadline for the
 * whole exchange, and a body over maxBytes is refused rather than cut.
 */
export async function fetchPublicDocument(req: DocumentRequest): Promise<DocumentResult> {
  const target = await checkWebhookTarget(req.url, 'agent_webhook', req.allowInsecureLocal, req.resolve);
  if (!target.ok) return { ok: false, error: target.error ?? 'refused' };
  const url = new URL(req.url);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<DocumentResult>((resolvePromise) => {
    let settled = false;
    const finish = (result: DocumentResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolvePromise(result);
    };
    const request = transport.request(
      url,
      {
        method: 'GET',
        agent: false,
        lookup: pinnedLookupOf(target.addresses[0]),
        headers: { accept: req.accept ?? 'application/json', 'user-agent': 'PostalMailAPI/1.0', connection: 'close' },
      },
      (res) => {
        const statusCode = res.statusCode ?? 0;
        if (statusCode >= 300 && statusCode < 400)
          return finish({ ok: false, error: `http_${statusCode}: redirects are not followed` });
        if (statusCode < 200 || statusCode >= 300) return finish({ ok: false, error: `http_${statusCode}` });
        const declared = Number(res.headers['content-length']);
        if (declared > req.maxBytes) return finish({ ok: false, error: `too_large: more than ${req.maxBytes} bytes` });
        const chunks: Buffer[] = [];
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > req.maxBytes)
            return finish({ ok: false, error: `too_large: more than ${req.maxBytes} bytes` });
          chunks.push(chunk);
        });
        res.on('end', () =>
          finish({
            ok: true,
            statusCode,
            body: Buffer.concat(chunks),
            cacheControl: typeof res.headers['cache-control'] === 'string' ? res.headers['cache-control'] : null,
            contentType: res.headers['content-type'] ?? null,
          }),
        );
        res.on('error', (err) => finish({ ok: false, error: `network_error: ${err.message}` }));
      },
    );
    const timer = setTimeout(
      () => finish({ ok: false, error: `timeout: no complete answer within ${req.deadlineMs / 1000} s` }),
      req.deadlineMs,
    );
    request.on('error', (err) =>
      finish({ ok: false, error: `network_error: ${(err as { code?: string }).code ?? err.message}` }),
    );
    request.end();
  });
}

export async function sendWebhook(req: SendRequest): Promise<SendResult> {
  const started = Date.now();
  const target = await checkWebhookTarget(req.url, req.kind, req.allowInsecureLocal, req.resolve);
  if (!target.ok)
    return {
      ok: false,
      statusCode: null,
      responseTimeMs: Date.now() - started,
      error: target.error ?? 'refused',
      body: '',
    };
  const pinnedLookup = pinnedLookupOf(target.addresses[0]);
  const url = new URL(req.url);
  const transport = url.protocol === 'https:' ? https : http;
  const bodyBuffer = Buffer.from(req.body, 'utf8');
  const deadlineMs = req.deadlineMs ?? ATTEMPT_DEADLINE_MS;

  return new Promise<SendResult>((resolvePromise) => {
    let settled = false;
    let statusCode: number | null = null;
    let headersAt: number | null = null;
    const chunks: Buffer[] = [];
    let received = 0;

    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      const ok = error === null && statusCode !== null && statusCode >= 200 && statusCode < 300;
      resolvePromise({
        ok,
        statusCode,
        responseTimeMs: (headersAt ?? Date.now()) - started,
        error:
          error ??
          (ok
            ? null
            : statusCode !== null && statusCode >= 300 && statusCode < 400
              ? `http_${statusCode}: redirects are not followed`
              : `http_${statusCode}`),
        // Postgres text cannot hold NUL characters.
        body: Buffer.concat(chunks)
          .subarray(0, MAX_RESPONSE_BYTES)
          .toString('utf8')
          .replace(/\u0000/g, ''),
      });
    };

    const request = transport.request(
      url,
      {
        method: 'POST',
        agent: false,
        lookup: pinnedLookup,
        headers: {
          ...req.headers,
          'content-type': 'application/json',
          'content-length': String(bodyBuffer.length),
          'user-agent': 'PostalMailAPI-Webhooks/1.0',
          connection: 'close',
        },
      },
      (res) => {
        statusCode = res.statusCode ?? null;
        headersAt = Date.now();
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          received += chunk.length;
          if (received >= MAX_RESPONSE_BYTES) {
            res.destroy();
            finish(null);
          }
        });
        res.on('end', () => finish(null));
        res.on('error', () => finish(null));
        res.on('close', () => finish(null));
      },
    );
    // The status line decides the attempt; a body still trickling at the deadline is cut.
    const timer = setTimeout(
      () => finish(statusCode === null ? `timeout: no response within ${deadlineMs / 1000} s` : null),
      deadlineMs,
    );
    request.on('error', (err) => finish(`network_error: ${(err as { code?: string }).code ?? err.message}`));
    request.end(bodyBuffer);
  });
}
