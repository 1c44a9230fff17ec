// JSON that is cheap to send and expensive to read: 14 MB of zeros or 7,000,000 levels of
// nesting in an MCP tools/call, 5,000 levels (10 KB) in `metadata`, oversized free-form
// objects and NUL escapes, on every body path (REST JSON, a multipart `metadata` field,
// MCP arguments, POST /agent/auth). Each is a clear 400 naming the field, never a 500 or
// INTERNAL, and the process keeps answering /healthz meanwhile: the event loop is
// measured (perf_hooks) while the hostile MCP bodies are sent, and the figures printed.
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { client } from '../helpers/http';
import { newAgentWithKey } from '../helpers/agents';
import { letterForm, letterPdf } from '../integration/mail-helpers';
import { MAX_FREE_FORM_JSON_BYTES, MAX_JSON_DEPTH } from '../../domain/shared/json-limits';
import { HostileApp, hostileMember, refusalProblem, snapshot, startHostileApp } from './helpers';

jest.setTimeout(180_000);

const RECIPIENT = {
  recipient_name: 'Ada Lovelace',
  recipient_line1: '12 Analytical Way',
  recipient_city: 'Austin',
  recipient_state: 'TX',
  recipient_zip: '78701',
};
const deepArray = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

describe('JSON bombs', () => {
  let app: HostileApp;
  let api: ReturnType<typeof client>;
  let memberId: string;
  let key: string;
  let agentTestKey: string;

  beforeAll(async () => {
    app = await startHostileApp();
    api = client(app.baseUrl);
    ({ memberId, key } = await hostileMember(app));
    agentTestKey = (await newAgentWithKey(app.baseUrl, key, { environment: 'test', scopes: ['mail.send'] })).credential
      .key;
  });
  afterAll(async () => {
    await app?.close();
  });

  /**
   * A raw tools/call; `args` is JSON text, so bodies no JSON.stringify would build can be
   * sent. The id comes last, as the TypeScript SDK writes it, so the whole body is read.
   */
  const toolCallBody = (tool: string, args: string) =>
    Buffer.from(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"${tool}","arguments":${args}},"id":7}`);
  const toolCall = (tool: string, args: string | Buffer) =>
    fetch(`${app.baseUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${agentTestKey}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: Buffer.isBuffer(args) ? args : toolCallBody(tool, args),
    });
  const withRecipient = (extra: string) =>
    `{${Object.entries(RECIPIENT)
      .map(([k, v]) => `"${k}":"${v}"`)
      .join(',')},"service_md_version":1,${extra}}`;
  /** POST /v1/test/mail (JSON) with `metadata` as given. */
  const testMail = (metadata: string) =>
    api('POST', '/v1/test/mail', {
      key: agentTestKey,
      raw: withRecipient(`"metadata":${metadata}`).replace(',"service_md_version":1', ''),
      headers: { 'content-type': 'application/json', 'x-service-md-version': '1' },
    });
  const mailForm = async (metadata: string) =>
    api('POST', '/v1/mail', {
      key: agentTestKey,
      headers: { 'x-service-md-version': '1' },
      form: letterForm(await letterPdf(), { metadata, dry_run: true }),
    });

  /** The tool refused its input with validation_error naming `field`; nothing was written. */
  async function refusedTool(res: Response, field: string, message: RegExp) {
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      result: { isError: true, structuredContent: { status: 400 } },
    });
    expect(body.result.content[0].text).toMatch(/^validation_error: /);
    expect(body.result.structuredContent.error.fields).toEqual([
      { path: field, message: expect.stringMatching(message) },
    ]);
  }

  describe('the event loop keeps turning', () => {
    /** Runs `during` while polling /healthz every 20 ms and measuring the event loop (perf_hooks). */
    async function measured<T>(during: () => Promise<T>) {
      const loop = monitorEventLoopDelay({ resolution: 10 });
      const healthz: number[] = [];
      let slowestHealthz = 0;
      let running = true;
      const poll = (async () => {
        while (running) {
          const started = performance.now();
          const res = await fetch(`${app.siteUrl}/healthz`);
          await res.arrayBuffer();
          healthz.push(res.status);
          slowestHealthz = Math.max(slowestHealthz, performance.now() - started);
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      loop.enable();
      const started = performance.now();
      const result = await during();
      const tookMs = performance.now() - started;
      running = false;
      await poll;
      loop.disable();
      return { result, tookMs, maxDelayMs: loop.max / 1e6, healthz, slowestHealthz };
    }
    const figures = (m: Awaited<ReturnType<typeof measured>>) =>
      `${m.tookMs.toFixed(0)} ms; event loop delay max ${m.maxDelayMs.toFixed(0)} ms; /healthz x${m.healthz.length}, slowest ${m.slowestHealthz.toFixed(0)} ms`;

    it.each([
      [
        'metadata.a = 7,000,000 zeros (14 MB)',
        () =>
          withRecipient(
            `"document_base64":"aGk=","document_filename":"a.txt","metadata":{"a":[${'0,'.repeat(6_999_999)}0]}`,
          ),
        'metadata',
        /more than 100000 values|bytes as sent/,
      ],
      [
        'metadata.a = 7,000,000 nested arrays (14 MB)',
        () =>
          withRecipient(
            `"document_base64":"aGk=","document_filename":"a.txt","metadata":{"a":${deepArray(7_000_000)}}`,
          ),
        'metadata',
        /deeper than 32/,
      ],
      [
        'recipient_name = 7,000,000 zeros (14 MB)',
        () => `{"recipient_name":[${'0,'.repeat(6_999_999)}0]}`,
        'recipient_name',
        /more than 100000 values/,
      ],
    ])(
      'send_outbound_mail with %s: validation_error, /healthz answers 200 throughout',
      async (label, makeArgs, field, message) => {
        // Built before the measurement: client and server share this process, only the server's work should count.
        const body = toolCallBody('send_outbound_mail', makeArgs());
        const before = await snapshot(app, memberId);
        // The same window without the request: what this (shared, loaded) machine gives anyway.
        const idle = await measured(() => new Promise((r) => setTimeout(r, 300)));
        const bomb = await measured(() => toolCall('send_outbound_mail', body));
        console.log(`${label}: answered in ${figures(bomb)}; without it: ${figures(idle)}`);
        await refusedTool(bomb.result, field, message);
        expect(bomb.healthz.length).toBeGreaterThan(0);
        expect(new Set(bomb.healthz)).toEqual(new Set([200]));
        // Generous bounds: the client shares this process and the machine runs the rest of the
        // suite beside it (on a quiet machine the figures are ~100 ms); before these limits the
        // same bodies held the loop for 7-12 s.
        expect(bomb.maxDelayMs).toBeLessThan(2000);
        // /healthz also waits on Postgres, Temporal and the object store, which a loaded machine
        // slows by itself (3.1 s seen in a fresh-clone run beside other work): the loop bound above
        // is the one that tells a held event loop apart.
        expect(bomb.slowestHealthz).toBeLessThan(5000);
        expect(await snapshot(app, memberId)).toEqual(before);
      },
    );

    it('the MCP body is held to what send_outbound_mail needs (13.4 MiB): 20 MB is a 413 that reaches the client', async () => {
      const res = await toolCall(
        'send_outbound_mail',
        withRecipient(`"document_base64":"${'A'.repeat(20 * 1024 * 1024)}","document_filename":"a.pdf"`),
      );
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({
        jsonrpc: '2.0',
        error: { code: -32600, message: expect.stringMatching(/larger than 14062936 bytes/) },
      });
    });
  });

  describe('5,000 levels of nesting inside metadata (10 KB): a 400 naming metadata on every body path', () => {
    const bomb = `{"a":${deepArray(5000)}}`;

    it('REST JSON: POST /v1/test/mail', async () => {
      const before = await snapshot(app, memberId);
      const res = await testMail(bomb);
      expect(refusalProblem(res, [400])).toBeNull();
      expect(res.body.fields).toEqual([
        { path: 'metadata', message: `nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays` },
      ]);
      expect(await snapshot(app, memberId)).toEqual(before);
    });

    it('REST multipart: the metadata field of POST /v1/mail', async () => {
      const res = await mailForm(bomb);
      expect(refusalProblem(res, [400])).toBeNull();
      expect(res.body.fields).toEqual([{ path: 'metadata', message: expect.stringMatching(/deeper than 32/) }]);
    });

    it('MCP: create_test_outbound_mail arguments', async () => {
      await refusedTool(
        await toolCall('create_test_outbound_mail', withRecipient(`"metadata":${bomb}`)),
        'metadata',
        /deeper than 32/,
      );
    });

    it('REST JSON: alias metadata and a nested object where a string belongs', async () => {
      const alias = await api('POST', '/v1/inbound-forwarding-addresses', {
        key,
        raw: `{"label":"Bills","metadata":${bomb}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(alias.body.fields).toEqual([{ path: 'metadata', message: expect.stringMatching(/deeper than 32/) }]);
      const agent = await api('POST', '/v1/agents', {
        key,
        raw: `{"name":"Deep","description":${bomb}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(agent.body.fields).toEqual([{ path: 'description', message: expect.stringMatching(/deeper than 32/) }]);
    });
  });

  describe('free-form objects are limited as sent, NUL escapes are refused, before anything is stored', () => {
    const padded = (bytes: number) => `{"note":"${'x'.repeat(bytes - 11)}"}`;

    it(`metadata of ${MAX_FREE_FORM_JSON_BYTES} bytes is stored and one byte more is a 400, on REST, multipart and MCP`, async () => {
      expect(Buffer.byteLength(padded(MAX_FREE_FORM_JSON_BYTES))).toBe(MAX_FREE_FORM_JSON_BYTES);
      const exact = await testMail(padded(MAX_FREE_FORM_JSON_BYTES));
      expect([exact.status, exact.body.metadata]).toEqual([201, JSON.parse(padded(MAX_FREE_FORM_JSON_BYTES))]);
      const over = await testMail(padded(MAX_FREE_FORM_JSON_BYTES + 1));
      expect([over.status, over.body.fields]).toEqual([
        400,
        [{ path: 'metadata', message: `must be a JSON object of at most ${MAX_FREE_FORM_JSON_BYTES} bytes as sent` }],
      ]);
      const form = await mailForm(padded(MAX_FREE_FORM_JSON_BYTES + 1));
      expect([form.status, form.body.fields?.[0]?.path]).toEqual([400, 'metadata']);
      await refusedTool(
        await toolCall(
          'create_test_outbound_mail',
          withRecipient(`"metadata":${padded(MAX_FREE_FORM_JSON_BYTES + 1)}`),
        ),
        'metadata',
        /bytes as sent/,
      );
    });

    it('a NUL escape inside multipart metadata or an /agent/auth field is a 400 at its path, not a 500', async () => {
      const form = await mailForm('{"a":"x\\u0000y"}');
      expect([form.status, form.body.fields?.[0]?.path]).toEqual([400, 'metadata']);
      const auth = await fetch(`${app.siteUrl}/agent/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"email":"a@example.com","agent_name":"a\\u0000b"}',
      });
      expect(auth.status).toBe(400);
      expect(((await auth.json()) as any).fields).toEqual([
        { path: 'agent_name', message: 'must not contain NUL (\\u0000) characters' },
      ]);
    });
  });
});
