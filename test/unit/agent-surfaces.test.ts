import { z } from 'zod';
import {
  attachmentTotalProblem,
  decodeBase64,
  MAX_ATTACHMENT_TOTAL_BYTES,
  supportCaseId,
  supportMessageId,
  ticketLimitRefusal,
} from '../../domain/support/conversations';
import { buildRegistry } from '../../api/mcp/registry';
import { defineTool } from '../../api/mcp/tool';
import { errorText } from '../../api/mcp/call';
import { MCP_TOOL_CATALOG } from '../../api/mcp/tools';

describe('support ticket limits', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  const hoursAgo = (h: number) => new Date(now.getTime() - h * 3600_000);

  it('refuses a fourth unresolved ticket before looking at the daily window', () => {
    expect(ticketLimitRefusal(3, [], now)).toEqual({ kind: 'active', active: 3 });
    expect(ticketLimitRefusal(2, [], now)).toBeNull();
  });

  it('counts new tickets over a rolling 24 hours and says when the oldest frees a slot', () => {
    expect(ticketLimitRefusal(0, [hoursAgo(1), hoursAgo(2)], now)).toBeNull();
    expect(ticketLimitRefusal(0, [hoursAgo(1), hoursAgo(2), hoursAgo(23)], now)).toEqual({
      kind: 'daily',
      opened: 3,
      retryAfterSeconds: 3600,
    });
    // A ticket 24 hours old or older has left the window.
    expect(ticketLimitRefusal(0, [hoursAgo(1), hoursAgo(2), hoursAgo(24)], now)).toBeNull();
  });

  it('formats case and message references', () => {
    expect(supportCaseId(42)).toBe('SUP-000042');
    expect(supportCaseId('1234567')).toBe('SUP-1234567');
    expect(supportMessageId(42, 3)).toBe('SUP-000042-M3');
  });

  it('decodes strict base64 only and bounds the attachment total', () => {
    expect(decodeBase64('aGVsbG8=')?.toString()).toBe('hello');
    expect(decodeBase64('aGVs\nbG8=')?.toString()).toBe('hello');
    for (const bad of ['', '***', 'a', 'aGVsbG8=x']) expect(decodeBase64(bad)).toBeNull();
    expect(attachmentTotalProblem([MAX_ATTACHMENT_TOTAL_BYTES])).toBeNull();
    expect(attachmentTotalProblem([MAX_ATTACHMENT_TOTAL_BYTES, 1])?.path).toBe('attachments');
  });
});

describe('MCP tool registry', () => {
  const noop = async () => ({});

  it('names the successor of a deprecated tool in its description and _meta', () => {
    const [tool] = buildRegistry(MCP_TOOL_CATALOG, [
      defineTool({
        name: 'list_inbound_items',
        description: 'Lists items.',
        input: z.object({}),
        access: 'GET /v1/inbound-items',
        handler: noop,
      }),
    ]);
    expect(tool.listing.description).toBe('Deprecated: use search_inbound_items instead. Lists items.');
    expect(tool.listing._meta).toMatchObject({
      group: 'managed_mailbox',
      deprecated: true,
      successor: 'search_inbound_items',
      rest_equivalent: 'GET /v1/inbound-items',
    });
    expect(tool.listing.annotations.readOnlyHint).toBe(true);
  });

  it('adds idempotency_key to mutations and service_md_version where the REST route guards the version', () => {
    const [tool] = buildRegistry(MCP_TOOL_CATALOG, [
      defineTool({
        name: 'send_facility_message',
        description: 'x',
        input: z.strictObject({ body: z.string() }),
        access: 'POST /v1/facility-messages',
        mutation: true,
        handler: noop,
      }),
    ]);
    expect(tool.listing.inputSchema).toMatchObject({
      type: 'object',
      required: ['body'],
      additionalProperties: false,
      properties: {
        body: { type: 'string' },
        idempotency_key: { type: 'string' },
        service_md_version: { type: 'integer' },
      },
    });
    expect(tool.input.safeParse({ body: 'b', service_md_version: '3' }).data).toEqual({
      body: 'b',
      service_md_version: 3,
    });
  });

  it('refuses declarations that are not in the catalog, are doubled, or have no access row', () => {
    const base = { description: 'x', input: z.object({}), handler: noop };
    expect(() =>
      buildRegistry(MCP_TOOL_CATALOG, [defineTool({ ...base, name: 'get_usage', access: 'GET /v1/nowhere' })]),
    ).toThrow(/no row/);
    expect(() =>
      buildRegistry(MCP_TOOL_CATALOG, [
        defineTool({ ...base, name: 'get_usage', access: 'GET /v1/usage' }),
        defineTool({ ...base, name: 'get_usage', access: 'GET /v1/usage' }),
      ]),
    ).toThrow(/twice/);
    expect(() => buildRegistry({}, [defineTool({ ...base, name: 'get_usage', access: 'GET /v1/usage' })])).toThrow(
      /catalog/,
    );
  });

  it('writes refusals as `<code or reason>: <message>`', () => {
    expect(
      errorText(403, { error: 'Test keys cannot use this endpoint; use a live key.', reason: 'live_key_required' }),
    ).toBe('live_key_required: Test keys cannot use this endpoint; use a live key.');
    expect(errorText(409, { error: { type: 'invalid_request', message: 'taken', code: 'agent_name_taken' } })).toBe(
      'agent_name_taken: taken',
    );
    expect(errorText(400, { error: 'Validation failed', fields: [{ path: 'body', message: 'too long' }] })).toBe(
      'validation_error: Validation failed (body: too long)',
    );
  });
});
