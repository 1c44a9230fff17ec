// The A2A server driven by the official client of @a2a-js/sdk against the real stack: the
// card at both names (resolved and accepted by the SDK), a quote, a sandbox letter followed
// to completed through the sandbox advance with its push notifications delivered (signed) to a
// local receiver, a live letter cancelled with one refund, a piece awaiting approval as
// input-required, and the bad inputs (rejected tasks with REST fields[], protocol errors).
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Message, MessageSendParams, Part, Task } from '@a2a-js/sdk';
import {
  A2AClient,
  Client,
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  TaskNotCancelableError,
  TaskNotFoundError,
} from '@a2a-js/sdk/client';
import { useTestApp } from '../helpers/app';
import { createFacility } from '../../services/accounts/accounts';
import { api, balance, ledger, letterPdf, newSender, RECIPIENT, Sender, waitFor } from './mail-helpers';
import { newMemberTestKey, startReceiver } from './webhook-helpers';

describe('A2A server at {base_url}/a2a (official @a2a-js/sdk client)', () => {
  const { app } = useTestApp();
  let facility: { facility_id: string; key: string };
  beforeAll(async () => {
    facility = await createFacility(app.deps, 'A2A Facility');
  });

  /** fetch with the caller's key (and any extra headers) on every request. */
  const keyed =
    (key: string, extra: Record<string, string> = {}): typeof fetch =>
    (input, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${key}`);
      for (const [k, v] of Object.entries(extra)) headers.set(k, v);
      return fetch(input, { ...init, headers });
    };

  async function clientFor(key: string, extra: Record<string, string> = {}): Promise<Client> {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl: keyed(key, extra) })],
      }),
    );
    // The card itself is public: the resolver fetches it without a key.
    return factory.createFromUrl(app.siteUrl);
  }

  const pdfPart = async (name = 'letter.pdf'): Promise<Part> => ({
    kind: 'file',
    file: { bytes: (await letterPdf()).toString('base64'), mimeType: 'application/pdf', name },
  });

  function message(skill: string, parts: Part[], extra: Partial<Message> = {}): Message {
    return { kind: 'message', role: 'user', messageId: randomUUID(), parts, metadata: { skill }, ...extra };
  }

  const letter = async (data: Record<string, unknown> = {}) => [
    await pdfPart(),
    { kind: 'data' as const, data: { ...RECIPIENT, service_md_version: 1, ...data } },
  ];

  async function send(client: Client, params: MessageSendParams): Promise<Task> {
    const result = await client.sendMessage(params);
    expect(result.kind).toBe('task');
    return result as Task;
  }

  const dataOf = (parts: Part[] | undefined): Record<string, any> =>
    Object.assign({}, ...(parts ?? []).filter((p) => p.kind === 'data').map((p) => p.data));

  const advance = (s: Sender, id: string) => api(app)('POST', `/v1/test/mail/${id}/advance`, { key: s.key });

  it('serves the card at agent-card.json and agent.json; the SDK resolves it and picks the JSON-RPC transport', async () => {
    const resolver = new DefaultAgentCardResolver();
    const card = await resolver.resolve(app.siteUrl);
    const specName = await resolver.resolve(app.siteUrl, '/.well-known/agent.json');
    expect(specName).toEqual(card);
    expect(card).toMatchObject({
      protocolVersion: '0.3.0',
      url: `${app.baseUrl}/a2a`,
      preferredTransport: 'JSONRPC',
      capabilities: { streaming: false, pushNotifications: true },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      // API keys, and OAuth access tokens issued for {base_url} (the A2A server is under it).
      security: [{ bearer: [] }, { oauth2: [] }],
    });
    expect(card.skills.map((s) => s.id)).toEqual(['quote_letter', 'send_letter', 'track_letter', 'read_inbox']);
    // The SDK's own checks: the legacy client validates the card's service URL, the factory finds a transport for it.
    const legacy = await A2AClient.fromCardUrl(`${app.siteUrl}/.well-known/agent-card.json`);
    expect(await legacy.getAgentCard()).toEqual(card);
    const client = await new ClientFactory().createFromAgentCard(card);
    expect(await client.getAgentCard()).toEqual(card);

    const anonymous = await fetch(`${app.baseUrl}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: randomUUID() } }),
    });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ reason: 'token_missing' });
  });

  it('quotes a letter as a dry run: a message whose DataPart has the price and proof_url; nothing stored', async () => {
    const s = await newSender(app, { environment: 'test' });
    const client = await clientFor(s.key);
    const reply = (await client.sendMessage({ message: message('quote_letter', await letter()) })) as Message;
    expect(reply.kind).toBe('message');
    const quote = dataOf(reply.parts);
    expect(quote).toMatchObject({ dry_run: true, credits_required_cents: 0, test_mode: true });
    expect(quote.cost_cents).toEqual(expect.any(Number));
    expect(quote.cost_breakdown).toBeDefined();
    expect(quote.proof_url).toMatch(/^http/);
    const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM outbound_mail WHERE member_id = $1`, [
      s.memberId,
    ]);
    expect(n).toBe(0);
  });

  it('sends a sandbox letter as a task that follows its piece to completed, pushing every change signed', async () => {
    const s = await newSender(app, { environment: 'test' });
    const client = await clientFor(s.key);
    const receiver = await startReceiver();
    try {
      const msg = message('send_letter', await letter({ metadata: { ref: 'a2a-1' } }));
      const task = await send(client, {
        message: msg,
        configuration: { pushNotificationConfig: { url: receiver.url, token: 'client-token-1' } },
      });
      expect(task.status.state).toBe('submitted');
      const pieceId = task.metadata!.outbound_mail_id as string;
      const secret = task.metadata!.push_notification_signing_secret as string;
      expect(secret).toMatch(/^whsec_/);
      const [piece] = await app.deps.db.query(`SELECT a2a_task_id FROM outbound_mail WHERE id = $1`, [pieceId]);
      expect(piece.a2a_task_id).toBe(task.id);
      expect(dataOf(task.artifacts?.[0].parts)).toMatchObject({
        id: pieceId,
        a2a_task_id: task.id,
        status: 'submitted',
      });

      // The same message again (twice at once) is the same task: no second letter.
      const again = await Promise.all([send(client, { message: msg }), send(client, { message: msg })]);
      for (const a of again) expect(a.id).toBe(task.id);
      expect(again[0].metadata!.push_notification_signing_secret).toBeUndefined();
      const [{ n }] = await app.deps.db.query(`SELECT count(*)::int AS n FROM outbound_mail WHERE member_id = $1`, [
        s.memberId,
      ]);
      expect(n).toBe(1);

      expect((await advance(s, pieceId)).body.status).toBe('ready');
      expect((await client.getTask({ id: task.id })).status.state).toBe('working');
      // track_letter reads the piece by its task: status and fresh signed photo URLs.
      const track = dataOf(
        (
          (await client.sendMessage({
            message: message('track_letter', [{ kind: 'data', data: { task_id: task.id } }]),
          })) as Message
        ).parts,
      );
      expect(track).toMatchObject({ outbound_mail_id: pieceId, status: 'ready', task_state: 'working' });
      expect(track.fulfillment_photos.length).toBeGreaterThan(0);
      expect(track.fulfillment_photos[0].url).toMatch(/X-Amz-Signature=/);

      expect((await advance(s, pieceId)).body.status).toBe('mailed');
      expect((await advance(s, pieceId)).body.status).toBe('delivered');
      const done = await client.getTask({ id: task.id });
      expect(done.status.state).toBe('completed');
      expect(dataOf(done.artifacts?.[0].parts)).toMatchObject({ status: 'delivered', metadata: { ref: 'a2a-1' } });

      // One push per change (submitted, ready, mailed, delivered), each the task as of its event.
      const received = await receiver.waitFor(4);
      const verifier = new Webhook(secret);
      const states = received.map((r) => {
        expect(r.headers['x-a2a-notification-token']).toBe('client-token-1');
        const body = verifier.verify(r.body, r.headers as Record<string, string>) as Task;
        expect(body).toMatchObject({ kind: 'task', id: task.id });
        return [body.status.state, body.metadata!.mail_status];
      });
      expect(states).toEqual(
        expect.arrayContaining([
          ['submitted', 'submitted'],
          ['working', 'ready'],
          ['working', 'mailed'],
          ['completed', 'delivered'],
        ]),
      );
      const tampered = received[0];
      expect(() =>
        verifier.verify(
          tampered.body.replace('"submitted"', '"completed"'),
          tampered.headers as Record<string, string>,
        ),
      ).toThrow();

      // A cancel once the letter is delivered is the protocol's not-cancelable error.
      await expect(client.cancelTask({ id: task.id })).rejects.toBeInstanceOf(TaskNotCancelableError);
    } finally {
      await receiver.close();
    }
  });

  it('cancels a live letter through tasks/cancel with one refund; printed letters cannot be cancelled', async () => {
    const s = await newSender(app, { facilityId: facility.facility_id, creditsCents: 100000 });
    const client = await clientFor(s.key);
    const task = await send(client, { message: message('send_letter', await letter()) });
    expect(task.status.state).toBe('submitted');
    const pieceId = task.metadata!.outbound_mail_id as string;
    const price = dataOf(task.artifacts?.[0].parts).cost_cents as number;
    expect(price).toBeGreaterThan(0);
    expect(await balance(app, s.memberId)).toBe(100000 - price);

    // Agent keys send their instructions version, as DELETE /v1/mail/{id} needs it. Three at once are one
    // Update of the piece's workflow: each answer reports that one cancellation, and the money moves once.
    const cancels = await Promise.all(
      [1, 2, 3].map(() => client.cancelTask({ id: task.id, metadata: { service_md_version: 1 } })),
    );
    for (const c of cancels) {
      expect(c.status.state).toBe('canceled');
      expect([0, price]).toContain(c.metadata?.refunded_credits_cents);
    }
    const repeat = await client.cancelTask({ id: task.id, metadata: { service_md_version: 1 } });
    expect(repeat.status.state).toBe('canceled');
    expect(await balance(app, s.memberId)).toBe(100000);
    expect((await ledger(app, pieceId)).map((l) => l.kind).sort()).toEqual(['debit', 'refund']);
    expect((await api(app)('GET', `/v1/mail/${pieceId}`, { key: s.key })).body).toMatchObject({
      status: 'cancelled',
      a2a_task_id: task.id,
    });

    // A sandbox letter already printed: MAIL_NOT_CANCELLABLE as -32002 with the REST body.
    const t = await newSender(app, { environment: 'test' });
    const sandbox = await clientFor(t.key, { 'x-service-md-version': '1' });
    const printed = await send(sandbox, { message: message('send_letter', await letter()) });
    await advance(t, printed.metadata!.outbound_mail_id as string);
    const refused = await sandbox.cancelTask({ id: printed.id }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TaskNotCancelableError);
    expect((refused as { errorResponse: any }).errorResponse.error.data).toMatchObject({
      status: 409,
      code: 'MAIL_NOT_CANCELLABLE',
    });
  });

  it('shows a piece awaiting the owner as input-required until the owner approves it', async () => {
    const s = await newSender(app, { environment: 'test', credential: { force_approval: true } });
    const client = await clientFor(s.key);
    const task = await send(client, { message: message('send_letter', await letter()) });
    expect(task.status.state).toBe('input-required');
    expect(task.metadata!.mail_status).toBe('pending_approval');
    expect((await client.getTask({ id: task.id })).status.state).toBe('input-required');
    const ownerKey = await newMemberTestKey(app.deps, s.memberId);
    const approved = await api(app)('POST', `/v1/mail/${task.metadata!.outbound_mail_id}/approve`, { key: ownerKey });
    expect(approved.status).toBe(200);
    expect((await client.getTask({ id: task.id })).status.state).toBe('submitted');
  });

  it('rejects bad letters with the REST fields[] and answers unknown skills, methods and tasks with protocol errors', async () => {
    const s = await newSender(app, { environment: 'test' });
    const client = await clientFor(s.key);

    const noDocument = await send(client, {
      message: message('send_letter', [{ kind: 'data', data: { ...RECIPIENT, service_md_version: 1 } }]),
    });
    expect(noDocument.status.state).toBe('rejected');
    expect(dataOf(noDocument.status.message?.parts)).toMatchObject({ status: 400, fields: [{ path: 'document' }] });

    const badAddress = await send(client, {
      message: message('send_letter', await letter({ recipient_zip: '1234', recipient_state: 'Texas' })),
    });
    expect(badAddress.status.state).toBe('rejected');
    const fields = dataOf(badAddress.status.message?.parts).fields as Array<{ path: string }>;
    expect(fields.map((f) => f.path).sort()).toEqual(['recipient_state', 'recipient_zip']);
    // Rejected tasks are kept: tasks/get answers the same refusal.
    expect((await client.getTask({ id: badAddress.id })).status.state).toBe('rejected');

    const noVersion = await send(client, {
      message: message('send_letter', await letter({ service_md_version: undefined })),
    });
    expect(dataOf(noVersion.status.message?.parts)).toMatchObject({ code: 'SERVICE_MD_VERSION_REQUIRED' });
    expect(noVersion.status.state).toBe('rejected');

    const unknownSkill = await client.sendMessage({ message: message('fax_letter', await letter()) }).catch((e) => e);
    expect((unknownSkill as { errorResponse: any }).errorResponse.error).toMatchObject({
      code: -32602,
      data: { skills: ['quote_letter', 'send_letter', 'track_letter', 'read_inbox'] },
    });

    const missing = await client
      .sendMessage({ message: message('track_letter', [{ kind: 'data', data: { outbound_mail_id: randomUUID() } }]) })
      .catch((e) => e);
    expect((missing as { errorResponse: any }).errorResponse.error).toMatchObject({
      code: -32602,
      data: { status: 404 },
    });

    await expect(client.getTask({ id: randomUUID() })).rejects.toBeInstanceOf(TaskNotFoundError);
    // Another member's task is not found either.
    const other = await newSender(app, { environment: 'test' });
    await expect((await clientFor(other.key)).getTask({ id: noDocument.id })).rejects.toBeInstanceOf(TaskNotFoundError);

    const unknownMethod = await fetch(`${app.baseUrl}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${s.key}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/frobnicate', params: {} }),
    });
    expect(await unknownMethod.json()).toMatchObject({ id: 7, error: { code: -32601 } });
    const stream = await fetch(`${app.baseUrl}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${s.key}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 8,
        method: 'message/stream',
        params: { message: message('quote_letter', await letter()) },
      }),
    });
    expect(await stream.json()).toMatchObject({ id: 8, error: { code: -32004 } });
    // The JSON limits of REST bodies hold before anything parses the request.
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    const bomb = await fetch(`${app.baseUrl}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${s.key}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'message/send',
        params: { message: message('send_letter', [{ kind: 'data', data: { metadata: { deep } } }]) },
      }),
    });
    expect(await bomb.json()).toMatchObject({ error: { code: -32600 } });
  });

  it('manages push notification configs of a task and refuses private URLs', async () => {
    const s = await newSender(app, { environment: 'test' });
    const client = await clientFor(s.key);
    const task = await send(client, { message: message('send_letter', await letter()) });
    const receiver = await startReceiver();
    try {
      const set = await client.setTaskPushNotificationConfig({
        taskId: task.id,
        pushNotificationConfig: {
          id: 'hook-1',
          url: receiver.url,
          authentication: { schemes: ['Bearer'], credentials: 'rcv-secret' },
        },
      });
      expect(set).toMatchObject({ taskId: task.id, pushNotificationConfig: { id: 'hook-1', url: receiver.url } });
      expect(JSON.stringify(set)).not.toContain('rcv-secret');
      expect(
        (await client.listTaskPushNotificationConfig({ id: task.id })).map((c) => c.pushNotificationConfig.id),
      ).toEqual(['hook-1']);
      expect(
        (await client.getTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'hook-1' } as never))
          .pushNotificationConfig.url,
      ).toBe(receiver.url);

      // The receiver fails the first attempt: the dispatcher retries the same notification.
      receiver.setReply((_r, n) => (n === 1 ? { status: 503 } : { status: 200, body: '{}' }));
      await advance(s, task.metadata!.outbound_mail_id as string);
      const [failed, pushed] = await receiver.waitFor(2);
      expect(pushed.headers['webhook-id']).toBe(failed.headers['webhook-id']);
      expect(pushed.headers.authorization).toBe('Bearer rcv-secret');
      expect(JSON.parse(pushed.body)).toMatchObject({ id: task.id, status: { state: 'working' } });

      await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'hook-1' });
      expect(await client.listTaskPushNotificationConfig({ id: task.id })).toEqual([]);
      await advance(s, task.metadata!.outbound_mail_id as string);
      await waitFor(
        async () =>
          (
            await app.deps.db.query(`SELECT 1 FROM events WHERE object_id = $1 AND event_type = 'mail.mailed'`, [
              task.metadata!.outbound_mail_id,
            ])
          ).length > 0,
        'mail.mailed',
      );
      expect(receiver.received).toHaveLength(2);

      const refused = await client
        .setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { url: 'https://10.0.0.8/hook' } })
        .catch((e) => e);
      expect((refused as { errorResponse: any }).errorResponse.error).toMatchObject({
        code: -32602,
        data: { status: 400, fields: [{ path: 'pushNotificationConfig.url' }] },
      });
    } finally {
      await receiver.close();
    }
  });

  it('reads the inbox read-only: forwarded and assigned lists, a source the key may not read listed as skipped', async () => {
    const s = await newSender(app, {
      environment: 'test',
      credential: { scopes: ['mail.send', 'inbound.read', 'agent.read', 'agent.inbox.read'] },
    });
    const client = await clientFor(s.key);
    const reply = (await client.sendMessage({
      message: message('read_inbox', [{ kind: 'data', data: { limit: 5 } }]),
    })) as Message;
    const data = dataOf(reply.parts);
    expect(Array.isArray(data.forwarded.items)).toBe(true);
    expect(Array.isArray(data.assigned.items)).toBe(true);
    expect(data.skipped).toEqual([]);

    const narrow = await newSender(app, { environment: 'test', credential: { scopes: ['mail.send', 'inbound.read'] } });
    const partial = dataOf(
      ((await (await clientFor(narrow.key)).sendMessage({ message: message('read_inbox', []) })) as Message).parts,
    );
    expect(partial.assigned).toBeNull();
    expect(partial.skipped).toEqual([expect.objectContaining({ source: 'assigned', reason: 'insufficient_scope' })]);
  });
});
