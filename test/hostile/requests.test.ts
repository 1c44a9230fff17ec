// Hostile requests around the bodies: huge headers (Node answers 431 itself), hostile
// header values (Authorization, Idempotency-Key, X-Service-MD-Version, X-Max-Cost-Cents),
// JSON with unknown fields, 10,000 and 200,000 levels of nesting, the wrong top-level type,
// invalid UTF-8 and oversize bodies, and hostile query strings and path parameters. Every
// answer is a 4xx in the spec's shape (or, where the input is legal, a success), never a
// 5xx, and nothing is written by a refusal.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { PDFDocument } from 'pdf-lib';
import { client, HttpResponse } from '../helpers/http';
import { newCredential } from '../helpers/agents';
import { letterForm } from '../integration/mail-helpers';
import { HostileApp, hostileMember, refusalProblem, snapshot, startHostileApp } from './helpers';

/** A raw HTTP/1.1 request, so that header sizes are not limited by the client. */
function rawRequest(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: Buffer | string } = {},
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers, maxHeaderSize: 1024 * 1024 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode!, body, headers: new Headers(res.headers as Record<string, string>) });
        });
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

describe('hostile requests', () => {
  let app: HostileApp;
  let api: ReturnType<typeof client>;
  let memberId: string;
  let key: string;
  let testKey: string;
  let agentKey: string;
  let pdf: Buffer;

  beforeAll(async () => {
    app = await startHostileApp();
    api = client(app.baseUrl);
    let agentId: string;
    ({ memberId, key, testKey, agentId } = await hostileMember(app));
    agentKey = (await newCredential(app.baseUrl, key, agentId)).key;
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]);
    pdf = Buffer.from(await doc.save());
  });
  afterAll(async () => {
    await app?.close();
  });

  async function refused(send: () => Promise<HttpResponse>, allowed: number[] = [400]) {
    const before = await snapshot(app, memberId);
    const res = await send();
    expect(refusalProblem(res, allowed)).toBeNull();
    expect(await snapshot(app, memberId)).toEqual(before);
    return res;
  }

  describe('headers', () => {
    it('a 64 KB header gets 431 from Node, not a 5xx, and the server keeps serving', async () => {
      const res = await rawRequest(`${app.baseUrl}/v1/credits`, {
        headers: { authorization: `Bearer ${key}`, 'x-padding': 'p'.repeat(64 * 1024) },
      });
      expect(res.status).toBe(431);
      expect((await api('GET', '/v1/credits', { key })).status).toBe(200);
    });

    it('many headers summing past the limit get 431', async () => {
      const headers: Record<string, string> = { authorization: `Bearer ${key}` };
      for (let i = 0; i < 200; i++) headers[`x-h${i}`] = 'v'.repeat(200);
      expect((await rawRequest(`${app.baseUrl}/v1/credits`, { headers })).status).toBe(431);
    });

    it.each([
      ['an 8 KB bearer token', `Bearer sk_live_${'a'.repeat(8 * 1024)}`, 'token_malformed'],
      ['SQL in the token', "Bearer sk_live_' OR '1'='1", 'token_malformed'],
      ['two tokens', `Bearer sk_live_${'a'.repeat(40)} sk_live_${'b'.repeat(40)}`, 'token_malformed'],
      [
        'a non-ASCII token',
        'Bearer sk_live_\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9',
        'token_malformed',
      ],
    ])('Authorization with %s: 401', async (_label, authorization, reason) => {
      const res = await rawRequest(`${app.baseUrl}/v1/credits`, {
        headers: { authorization: Buffer.from(authorization, 'latin1').toString('latin1') },
      });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ reason });
    });

    it.each([
      ['300 characters', 'k'.repeat(300)],
      ['a space', 'retry key'],
      ['SQL', "k'); DROP TABLE idempotency_records;--"],
    ])('an Idempotency-Key of %s is refused before anything is written', async (_label, idempotencyKey) => {
      const res = await refused(() =>
        api('POST', '/v1/mail', { key, form: letterForm(pdf), headers: { 'idempotency-key': idempotencyKey } }),
      );
      expect(res.body.fields[0].path).toBe('headers.idempotency-key');
    });

    it.each(['1 OR 1=1', '-1', '1e3', '99999999999999999999', ' ', '1.0.0'])(
      'X-Service-MD-Version %j on an agent key: 400 or 409, nothing written',
      async (version) => {
        await refused(
          () =>
            api('POST', '/v1/mail', {
              key: agentKey,
              form: letterForm(pdf),
              headers: { 'x-service-md-version': version },
            }),
          [400, 409],
        );
      },
    );

    it.each(['-1', '1e309', 'abc', '1.5', '99999999999999999999999', '0'])(
      'X-Max-Cost-Cents %j: 4xx or a success, never 5xx',
      async (cap) => {
        const before = await snapshot(app, memberId);
        const res = await api('POST', '/v1/mail', {
          key: testKey,
          form: letterForm(pdf, { allow_duplicate: true }),
          headers: { 'x-max-cost-cents': cap },
        });
        if (res.status === 201) return;
        expect(refusalProblem(res, [400, 422])).toBeNull();
        expect(await snapshot(app, memberId)).toEqual(before);
      },
    );
  });

  describe('JSON bodies', () => {
    const agents =
      (body: string | Buffer, contentType = 'application/json') =>
      () =>
        api('POST', '/v1/agents', { key, raw: body, headers: { 'content-type': contentType } });

    it('an unknown field is a 400 naming it', async () => {
      const res = await refused(agents(JSON.stringify({ name: 'Valid Name', is_admin: true })));
      expect(JSON.stringify(res.body.fields)).toContain('is_admin');
    });

    it('a prototype-pollution key is an unknown field, and pollutes nothing', async () => {
      await refused(
        agents('{"name":"Valid Name","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'),
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it.each([
      ['10,000 nested arrays', '['.repeat(10000) + ']'.repeat(10000)],
      ['200,000 nested arrays', '['.repeat(200000) + ']'.repeat(200000)],
      [
        '10,000 nested objects in a field',
        `{"name":"Deep","description":${'{"a":'.repeat(10000)}1${'}'.repeat(10000)}}`,
      ],
      ['an array', '[{"name":"Valid Name"}]'],
      ['a string', '"Valid Name"'],
      ['a number', '42'],
      ['null', 'null'],
      ['truncated JSON', '{"name":"Valid'],
      ['trailing garbage', '{"name":"Valid Name"} {"name":"Other"}'],
      ['a lone BOM', '\uFEFF'],
      ['a number too large for any field', '{"name":"Valid Name","description":1e400}'],
    ])('%s: 400, nothing written', async (_label, body) => {
      await refused(agents(body));
    });

    it('a body that is itself 200,000 nested arrays is refused on body; deep JSON inside a field names the field', async () => {
      const root = await refused(agents('['.repeat(200000) + ']'.repeat(200000)));
      expect(root.body.fields).toEqual([
        { path: 'body', message: 'nests deeper than 32 levels of objects and arrays' },
      ]);
      const field = await refused(
        agents(`{"name":"Deep","description":${'{"a":'.repeat(10000)}1${'}'.repeat(10000)}}`),
      );
      expect(field.body.fields).toEqual([
        { path: 'description', message: 'nests deeper than 32 levels of objects and arrays' },
      ]);
    });

    it('2 MB of JSON is refused', async () => {
      await refused(
        agents(JSON.stringify({ name: 'Valid Name', description: 'd'.repeat(2 * 1024 * 1024) })),
        [400, 413],
      );
    });

    it('invalid UTF-8 is refused with 400 (not stored with replacement characters)', async () => {
      const body = Buffer.concat([Buffer.from('{"name":"Bad '), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]);
      const res = await agents(body)();
      expect(refusalProblem(res, [400])).toBeNull();
      expect(res.body.fields).toEqual([{ path: 'body', message: expect.stringContaining('UTF-8') }]);
    });

    it('UTF-8 with a byte-order mark is read', async () => {
      const name = `bom-${randomBytes(4).toString('hex')}`;
      const res = await agents(
        Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ name }))]),
      )();
      expect([res.status, res.body.name]).toEqual([201, name]);
    });

    it('gzip-encoded JSON is refused with 400, not misread', async () => {
      const res = await api('POST', '/v1/agents', {
        key,
        raw: gzipSync(JSON.stringify({ name: 'zipped' })),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expect(refusalProblem(res, [400])).toBeNull();
    });

    it('JSON under another content type is not parsed: 400 for the missing fields', async () => {
      await refused(agents(JSON.stringify({ name: 'Valid Name' }), 'text/plain'), [400, 415]);
    });
  });

  describe('query strings and path parameters', () => {
    it.each([
      'limit=-1',
      'limit=1e309',
      'limit=100000000000000000000',
      'offset=NaN',
      'offset=-5',
      'status=delivered%27%20OR%201=1',
      'created_after=2026-13-45',
      'created_before=%27;DROP%20TABLE%20outbound_mail;--',
      'test_mode=maybe',
      'limit=1&limit=2',
      'status[]=x',
    ])('GET /v1/mail?%s: 400', async (query) => {
      expect(refusalProblem(await api('GET', `/v1/mail?${query}`, { key }), [400])).toBeNull();
    });

    it.each([
      ['10,000 characters', `q=${'x'.repeat(10000)}`],
      ['SQL', "q=' OR '1'='1"],
      ['percent signs', 'q=%25%25%25'],
      ['an underscore', 'q=_'],
      ['a backslash', 'q=%5C'],
    ])('GET /v1/mail with q of %s: 200 or 400, never 5xx', async (_label, query) => {
      const res = await api('GET', `/v1/mail?${query}`, { key });
      if (res.status === 200) expect(res.body.mail).toEqual([]);
      else expect(refusalProblem(res, [400])).toBeNull();
    });

    it.each([
      ['path traversal', '..%2F..%2F..%2Fetc%2Fpasswd'],
      ['SQL', "1'%20OR%20'1'='1"],
      ['NUL', '%00'],
      ['overlong dots', '%C0%AE%C0%AE'],
      ['5,000 characters', 'x'.repeat(5000)],
      ['a UUID and a quote', '00000000-0000-0000-0000-000000000000%27'],
    ])('GET /v1/mail/{%s}: 400 or 404', async (_label, id) => {
      expect(refusalProblem(await api('GET', `/v1/mail/${id}`, { key }), [400, 404])).toBeNull();
    });

    it('a path that climbs out of the API prefix is not served from disk', async () => {
      const res = await rawRequest(`${app.siteUrl}/api/v1/../../../../etc/passwd`);
      expect(res.status).toBe(404);
      expect(String(typeof res.body === 'string' ? res.body : JSON.stringify(res.body))).not.toContain('root:');
    });
  });
});
