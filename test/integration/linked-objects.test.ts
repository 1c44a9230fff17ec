// Request fields that name another object must name one the caller may see: the same
// member, the key's environment, and for agent keys their own agent's objects. Unknown,
// foreign, other-agent and other-environment ids are all 400 with the field's path, and
// nothing is stored; REST and MCP answer alike.
import { randomUUID } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { useTestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { insertMemberKey } from '../../services/accounts/accounts';
import { letterForm, letterPdf, mailCount, waitFor } from './mail-helpers';

const MD = { 'x-service-md-version': '1' };
const RECIPIENT = {
  recipient_name: 'Jane Doe',
  recipient_line1: '1 Main St',
  recipient_city: 'Austin',
  recipient_state: 'TX',
  recipient_zip: '78701',
};

describe('linked object ids', () => {
  const { app, api } = useTestApp();
  /** One member's world: two agents with live and test keys, and inbound mail with its thread in both environments. */
  interface World {
    memberId: string;
    memberKey: string;
    memberTestKey: string;
    agentA: string;
    agentB: string;
    keyA: string;
    keyB: string;
    testKeyA: string;
    live: { item: string; thread: string };
    sandbox: { item: string; thread: string };
  }
  let owner: World;
  let stranger: World;

  async function inboundMail(
    key: string,
    agentId: string,
    testMode: boolean,
  ): Promise<{ item: string; thread: string }> {
    const alias = await api('POST', '/v1/inbound-forwarding-addresses', {
      key,
      json: { label: 'bills', agent_id: agentId },
    });
    expect(alias.status).toBe(201);
    const email = alias.body.forwarding_address.email;
    const raw = [
      'From: Billing <billing@example.com>',
      `To: ${email}`,
      'Subject: Invoice 42 due',
      `Message-ID: <${randomUUID()}@example.com>`,
      `Date: ${new Date().toUTCString()}`,
      '',
      'Your invoice 42 of $10.00 is due on 2030-01-01.',
      '',
    ].join('\r\n');
    const res = await api('POST', `/v1/intake/email?recipient=${encodeURIComponent(email)}`, {
      raw,
      headers: { 'x-intake-secret': app.deps.config.intakeSecret, 'content-type': 'message/rfc822' },
    });
    expect(res.status).toBe(202);
    const item = res.body.item_id as string;
    const [row] = await waitFor(async () => {
      const rows = await app.deps.db.query(
        `SELECT thread_id, test_mode FROM inbound_mail_items WHERE id = $1 AND thread_id IS NOT NULL`,
        [item],
      );
      return rows.length ? rows : null;
    }, `the thread of ${item}`);
    expect(row.test_mode).toBe(testMode);
    return { item, thread: row.thread_id };
  }

  async function newWorld(): Promise<World> {
    const member = await newMember(app.deps, { creditsCents: 100000 });
    const memberTestKey = (
      await insertMemberKey(app.deps.db, member.member_id, { name: 'sandbox', environment: 'test' })
    ).key;
    const a = await newAgent(app.baseUrl, member.key);
    const b = await newAgent(app.baseUrl, member.key);
    const scopes = [
      'mail.send',
      'inbound.read',
      'mailbox.write',
      'webhook.manage',
      'webhook.read',
      'message.send',
      'agent.read',
    ];
    return {
      memberId: member.member_id,
      memberKey: member.key,
      memberTestKey,
      agentA: a.id,
      agentB: b.id,
      keyA: (await newCredential(app.baseUrl, member.key, a.id, { scopes })).key,
      keyB: (await newCredential(app.baseUrl, member.key, b.id, { scopes })).key,
      testKeyA: (await newCredential(app.baseUrl, member.key, a.id, { scopes, environment: 'test' })).key,
      live: await inboundMail(member.key, a.id, false),
      sandbox: await inboundMail(memberTestKey, a.id, true),
    };
  }

  beforeAll(async () => {
    owner = await newWorld();
    stranger = await newWorld();
  });

  async function sendLetter(key: string, fields: Record<string, string>) {
    return api('POST', '/v1/mail', { key, headers: MD, form: letterForm(await letterPdf(), fields) });
  }

  it("refuses another member's, another agent's, the other environment's and unknown ids on POST /v1/mail, storing nothing", async () => {
    const before = await mailCount(app, owner.memberId);
    const cases: Array<[string, string, Record<string, string>, string[]]> = [
      [
        "another member's inbound mail and thread",
        owner.keyA,
        { inbound_capture_id: stranger.live.item, postal_mail_thread_id: stranger.live.thread },
        ['inbound_capture_id', 'postal_mail_thread_id'],
      ],
      ["another agent's inbound mail", owner.keyB, { inbound_capture_id: owner.live.item }, ['inbound_capture_id']],
      [
        "the sandbox's inbound mail from a live key",
        owner.keyA,
        { inbound_capture_id: owner.sandbox.item, postal_mail_thread_id: owner.sandbox.thread },
        ['inbound_capture_id', 'postal_mail_thread_id'],
      ],
      [
        'ids that do not exist',
        owner.keyA,
        { package_id: randomUUID(), inbound_capture_id: randomUUID(), postal_mail_thread_id: randomUUID() },
        ['inbound_capture_id', 'package_id', 'postal_mail_thread_id'],
      ],
    ];
    for (const [what, key, fields, paths] of cases) {
      const res = await sendLetter(key, fields);
      expect({
        what,
        status: res.status,
        paths: (res.body.fields ?? []).map((f: { path: string }) => f.path).sort(),
      }).toEqual({ what, status: 400, paths });
      expect(res.body.fields[0].message).toMatch(/no .* with this id is visible to this key/);
    }
    // The sandbox: a test key may not link live mail either.
    const fromTest = await api('POST', '/v1/test/mail', {
      key: owner.testKeyA,
      headers: MD,
      json: { ...RECIPIENT, inbound_capture_id: owner.live.item },
    });
    expect(fromTest.status).toBe(400);
    expect(fromTest.body.fields.map((f: { path: string }) => f.path)).toEqual(['inbound_capture_id']);
    expect(await mailCount(app, owner.memberId)).toBe(before);

    // Control: the agent's own ids (and the sandbox's own ids for a test key) are stored on the piece.
    const mine = await sendLetter(owner.keyA, {
      inbound_capture_id: owner.live.item,
      postal_mail_thread_id: owner.live.thread,
    });
    expect(mine.status).toBe(201);
    expect(mine.body).toMatchObject({ inbound_capture_id: owner.live.item, postal_mail_thread_id: owner.live.thread });
    const sandboxMine = await api('POST', '/v1/test/mail', {
      key: owner.testKeyA,
      headers: MD,
      json: { ...RECIPIENT, inbound_capture_id: owner.sandbox.item },
    });
    expect(sandboxMine.status).toBe(201);
  });

  it('answers the MCP send_outbound_mail and create_test_outbound_mail tools the same way', async () => {
    type ToolResult = {
      isError?: boolean;
      structuredContent?: { status?: number; error?: { fields?: Array<{ path: string }> } };
    };
    const callAs = async (key: string, name: string, args: Record<string, unknown>): Promise<ToolResult> => {
      const client = new Client({ name: 'linked-objects', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${app.baseUrl}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${key}` } },
        }),
      );
      try {
        return (await client.callTool({ name, arguments: args })) as ToolResult;
      } finally {
        await client.close();
      }
    };
    const before = await mailCount(app, owner.memberId);
    const sent = await callAs(owner.keyA, 'send_outbound_mail', {
      ...RECIPIENT,
      document_base64: (await letterPdf()).toString('base64'),
      document_filename: 'letter.pdf',
      service_md_version: 1,
      inbound_capture_id: stranger.live.item,
      postal_mail_thread_id: randomUUID(),
    });
    const test = await callAs(owner.testKeyA, 'create_test_outbound_mail', {
      ...RECIPIENT,
      service_md_version: 1,
      inbound_capture_id: owner.live.item,
    });
    for (const [result, paths] of [
      [sent, ['inbound_capture_id', 'postal_mail_thread_id']],
      [test, ['inbound_capture_id']],
    ] as const) {
      expect(result.isError).toBe(true);
      expect(result.structuredContent?.status).toBe(400);
      expect(result.structuredContent?.error?.fields?.map((f) => f.path).sort()).toEqual(paths);
    }
    expect(await mailCount(app, owner.memberId)).toBe(before);
  });

  it('refuses unknown or foreign agent_id, endpoint_id and conversation_id in every other body that names one', async () => {
    const foreignAgent = stranger.agentA;
    const expect400 = async (res: Promise<{ status: number; body: any }>, path: string) => {
      const r = await res;
      expect({ status: r.status, fields: r.body.fields }).toEqual({
        status: 400,
        fields: [{ path, message: expect.stringMatching(/with this id is visible to this key/) }],
      });
    };
    const hook = { name: 'hook', url: 'http://127.0.0.1:9/h', event_types: ['*'] };
    await expect400(
      api('POST', '/v1/webhook-endpoints', { key: owner.memberKey, json: { ...hook, agent_id: foreignAgent } }),
      'agent_id',
    );
    await expect400(
      api('POST', '/v1/webhook-endpoints', { key: owner.memberKey, json: { ...hook, agent_id: randomUUID() } }),
      'agent_id',
    );
    await expect400(
      api('POST', '/v1/inbound-forwarding-addresses', {
        key: owner.memberKey,
        json: { label: 'x', agent_id: foreignAgent },
      }),
      'agent_id',
    );
    const alias = (
      await api('POST', '/v1/inbound-forwarding-addresses', { key: owner.memberKey, json: { label: 'mine' } })
    ).body.forwarding_address.id;
    await expect400(
      api('PATCH', `/v1/inbound-forwarding-addresses/${alias}`, {
        key: owner.memberKey,
        json: { agent_id: foreignAgent },
      }),
      'agent_id',
    );
    await expect400(
      api('PUT', '/v1/webhooks/settings', { key: owner.memberKey, json: { agent_id: foreignAgent, enabled: true } }),
      'agent_id',
    );
    await expect400(
      api('POST', '/v1/test/webhook', { key: owner.memberKey, json: { agent_id: foreignAgent } }),
      'agent_id',
    );

    const foreignEndpoint = (await api('POST', '/v1/webhook-endpoints', { key: stranger.memberKey, json: hook })).body
      .endpoint.id;
    const sandboxEndpoint = (await api('POST', '/v1/webhook-endpoints', { key: owner.memberTestKey, json: hook })).body
      .endpoint.id;
    await expect400(
      api('POST', '/v1/test/webhook', { key: owner.memberKey, json: { endpoint_id: foreignEndpoint } }),
      'endpoint_id',
    );
    await expect400(
      api('POST', '/v1/test/webhook', { key: owner.memberKey, json: { endpoint_id: sandboxEndpoint } }),
      'endpoint_id',
    );

    const theirTicket = (
      await api('POST', '/v1/support/messages', {
        key: stranger.memberKey,
        json: { category: 'support', body: 'help' },
      })
    ).body.message.conversation_id;
    await expect400(
      api('POST', '/v1/support/messages', {
        key: owner.memberKey,
        json: { conversation_id: theirTicket, body: 'hijack' },
      }),
      'conversation_id',
    );
    const theirThread = (
      await api('POST', '/v1/facility-messages', { key: stranger.memberKey, json: { body: 'hello' } })
    ).body.message.conversation_id;
    await expect400(
      api('POST', '/v1/facility-messages', {
        key: owner.memberKey,
        json: { conversation_id: theirThread, body: 'hijack' },
      }),
      'conversation_id',
    );
    const sandboxThread = (
      await api('POST', '/v1/facility-messages', { key: owner.memberTestKey, json: { body: 'sandbox hello' } })
    ).body.message.conversation_id;
    await expect400(
      api('POST', '/v1/facility-messages', {
        key: owner.memberKey,
        json: { conversation_id: sandboxThread, body: 'wrong environment' },
      }),
      'conversation_id',
    );

    // Nothing was stored by the refusals: the stranger's objects have only their own messages, the owner no extra endpoint.
    const [{ n }] = await app.deps.db.query(
      `SELECT count(*)::int AS n FROM facility_messages WHERE conversation_id = ANY($1)`,
      [[theirThread, sandboxThread]],
    );
    expect(n).toBe(2);
    const [{ endpoints }] = await app.deps.db.query(
      `SELECT count(*)::int AS endpoints FROM webhook_endpoints WHERE member_id = $1`,
      [owner.memberId],
    );
    expect(endpoints).toBe(1);
  });
});
