// Clients that trickle: a body at one byte every 2 seconds, headers at one byte a second,
// a keep-alive connection left idle. The API's deadlines (HTTP_REQUEST_TIMEOUT_MS,
// HTTP_HEADERS_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS; short here) cut them off with 408
// or a close, instead of holding a connection for as long as the client likes.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../config';
import { HostileApp, hostileMember, startHostileApp } from './helpers';

jest.setTimeout(120_000);

/** Opens a socket, writes `head` at once and then `trickle` one byte per `everyMs`; resolves with what came back and when. */
function trickle(
  url: string,
  head: string,
  trickleBytes: string,
  everyMs: number,
): Promise<{ answer: string; afterMs: number; sentBytes: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const started = performance.now();
    let answer = '';
    let sentBytes = 0;
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(head);
      const timer = setInterval(() => {
        if (sentBytes >= trickleBytes.length || socket.destroyed) return clearInterval(timer);
        socket.write(trickleBytes[sentBytes++]);
      }, everyMs);
      socket.on('close', () => clearInterval(timer));
    });
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ answer, afterMs: performance.now() - started, sentBytes }));
  });
}

describe('slow clients', () => {
  let app: HostileApp;
  let key: string;
  beforeAll(async () => {
    app = await startHostileApp({
      HTTP_REQUEST_TIMEOUT_MS: '3000',
      HTTP_HEADERS_TIMEOUT_MS: '2000',
      HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
    });
    ({ key } = await hostileMember(app));
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a body sent one byte every 2 seconds is cut off with 408 at the request deadline', async () => {
    const { host, pathname } = new URL(`${app.baseUrl}/v1/agents`);
    const body = JSON.stringify({ name: 'Slow Loris', description: 'x'.repeat(60) });
    const head = `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const r = await trickle(app.baseUrl, head, body, 2000);
    console.log(
      `slow body: ${r.answer.split('\r\n')[0] || '(closed)'} after ${(r.afterMs / 1000).toFixed(1)} s, ${r.sentBytes} of ${body.length} bytes sent`,
    );
    expect(r.answer).toMatch(/^HTTP\/1\.1 408 /);
    // The whole body would have taken more than 2 minutes.
    expect(r.sentBytes).toBeLessThan(body.length);
  });

  it('headers sent one byte a second are cut off with 408 at the headers deadline', async () => {
    const { host, pathname } = new URL(`${app.baseUrl}/v1/credits`);
    const headers = `X-Slow: ${'s'.repeat(60)}\r\nAuthorization: Bearer ${key}\r\n\r\n`;
    const r = await trickle(app.baseUrl, `GET ${pathname} HTTP/1.1\r\nHost: ${host}\r\n`, headers, 1000);
    console.log(
      `slow headers: ${r.answer.split('\r\n')[0] || '(closed)'} after ${(r.afterMs / 1000).toFixed(1)} s, ${r.sentBytes} of ${headers.length} bytes sent`,
    );
    expect(r.answer).toMatch(/^HTTP\/1\.1 408 /);
    // Cut within seconds of the 2 s deadline, not at Node's default of a minute or more.
    expect(r.sentBytes).toBeLessThan(15);
  });

  it('an idle keep-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
    const { host } = new URL(app.siteUrl);
    const r = await trickle(app.siteUrl, `GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`, '', 1000);
    expect(r.answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(r.answer).toMatch(/keep-alive: timeout=1/i);
  });

  it('refuses a headers deadline longer than the request deadline at start-up', () => {
    expect(() => loadConfig({ HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '2000' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS/,
    );
    expect(loadConfig({})).toMatchObject({
      httpRequestTimeoutMs: 120_000,
      httpHeadersTimeoutMs: 20_000,
      httpKeepAliveTimeoutMs: 65_000,
    });
  });
});
