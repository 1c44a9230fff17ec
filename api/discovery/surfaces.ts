// OpenAPI paths of the surfaces that are not REST routes: the MCP and A2A endpoints under
// the API prefix, the site-root discovery documents and POST /agent/auth (both with a path-level
// server, since they live at the site root rather than under {base_url}).
import { z } from 'zod';
import type { Config } from '../../config';
import { A2A_PATH, AGENT_AUTH_PATH, DISCOVERY_DOCUMENTS } from './documents';
import { MAX_FREE_FORM_JSON_BYTES, MAX_JSON_DEPTH, MAX_JSON_VALUES } from '../../domain/shared/json-limits';
import { MCP_BODY_LIMIT } from '../mcp/http';
import { A2A_BODY_LIMIT } from '../a2a/http';
import { A2A_PROTOCOL_VERSION, A2A_SKILL_IDS } from '../../domain/a2a/tasks';
import { MCP_PROTOCOL_VERSION, MCP_PROTOCOL_VERSIONS } from '../mcp/tools';
import { visible } from '../schemas/common';

export const AgentAuthRequest = z.strictObject({
  email: z.email({ message: 'must be an email address' }).max(254),
  agent_name: visible(z.string().min(1).max(100)).optional(),
  purpose: z.string().max(1000).optional().describe('what the agent wants to do, shown to the human'),
});

type Json = Record<string, unknown>;

const errorResponse = (description: string): Json => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

const JsonRpcMessage: Json = {
  type: 'object',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer', 'null'] },
    method: {
      type: 'string',
      description:
        'MCP: initialize, tools/list, tools/call, ping, notifications/initialized. A2A: message/send, tasks/get, tasks/cancel, tasks/pushNotificationConfig/set|get|list|delete',
    },
    params: { type: 'object' },
    result: {
      description:
        'MCP tools/call: {content[], structuredContent: {result}, isError?}. A2A: a Task or Message (message/send), a Task, a push notification config (or a list of them), or null (delete)',
    },
    error: {
      type: 'object',
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: { type: 'object' } },
    },
  },
};

export function agentSurfacePaths(config: Config): Record<string, Json> {
  const site = [{ url: config.siteUrl, description: 'Site root' }];
  const paths: Record<string, Json> = {
    '/mcp': {
      post: {
        operationId: 'mcp',
        summary: 'MCP server (Streamable HTTP, stateless, protocol 2025-11-25)',
        description:
          'JSON-RPC 2.0 over POST. Send `Accept: application/json, text/event-stream`. Tool results are in `result.structuredContent.result`; refusals have `result.isError: true` with text `<code or reason>: <message>`. Mutating tools take `idempotency_key`; agent keys send `service_md_version` where the REST equivalent needs X-Service-MD-Version. ' +
          `Protocol revisions ${MCP_PROTOCOL_VERSIONS.join(', ')}: initialize answers ${MCP_PROTOCOL_VERSION} for any other. ` +
          `Bodies up to ${MCP_BODY_LIMIT} bytes; arguments nest at most ${MAX_JSON_DEPTH} levels with at most ${MAX_JSON_VALUES} values, free-form objects at most ${MAX_FREE_FORM_JSON_BYTES} bytes as sent.`,
        tags: ['MCP'],
        security: [{ bearerAuth: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: JsonRpcMessage } } },
        responses: {
          200: { description: 'JSON-RPC response', content: { 'application/json': { schema: JsonRpcMessage } } },
          202: { description: 'Notification accepted' },
          400: {
            description:
              'Unsupported MCP-Protocol-Version (error.data.supported lists the revisions), or a request over the JSON limits outside tool arguments',
            content: { 'application/json': { schema: JsonRpcMessage } },
          },
          413: {
            description: `Body larger than ${MCP_BODY_LIMIT} bytes`,
            content: { 'application/json': { schema: JsonRpcMessage } },
          },
          401: errorResponse('Missing or invalid key (WWW-Authenticate names the protected-resource metadata)'),
          429: errorResponse('Rate limit'),
        },
      },
    },
    [A2A_PATH]: {
      post: {
        operationId: 'a2a',
        summary: `A2A server (JSON-RPC 2.0, protocol ${A2A_PROTOCOL_VERSION}); the agent card is /.well-known/agent-card.json`,
        description:
          'Methods message/send, tasks/get, tasks/cancel and tasks/pushNotificationConfig/{set,get,list,delete}; no streaming. ' +
          `message.metadata.skill names the skill (${A2A_SKILL_IDS.join(', ')}). quote_letter, track_letter and read_inbox answer with a message ` +
          'whose DataPart is the REST JSON; send_letter answers with a task that follows the piece (submitted, working, completed, failed, canceled; ' +
          'input-required while awaiting approval; rejected with the REST error body, fields[] included, when refused). The messageId is the ' +
          'idempotency key. tasks/cancel is DELETE /v1/mail/{id} (-32002 once printing started). Push notification configs receive the task on every ' +
          'change, signed with Standard Webhooks headers under the signingSecret the set answer shows once. REST refusals of other calls are ' +
          'JSON-RPC errors -32602 (or -32603 when a retry may succeed) with error.data = {status, ...REST error body}. ' +
          `Bodies up to ${A2A_BODY_LIMIT} bytes; at most ${MAX_JSON_DEPTH} levels and ${MAX_JSON_VALUES} values.`,
        tags: ['A2A'],
        security: [{ bearerAuth: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: JsonRpcMessage } } },
        responses: {
          200: {
            description: 'JSON-RPC response (errors included, as the A2A JSON-RPC binding has them)',
            content: { 'application/json': { schema: JsonRpcMessage } },
          },
          413: {
            description: `Body larger than ${A2A_BODY_LIMIT} bytes`,
            content: { 'application/json': { schema: JsonRpcMessage } },
          },
          401: errorResponse('Missing or invalid key (WWW-Authenticate names the protected-resource metadata)'),
          429: errorResponse('Rate limit'),
        },
      },
    },
    [AGENT_AUTH_PATH]: {
      servers: site,
      post: {
        operationId: 'agentAuth',
        summary: 'Record an agent sign-in intent (verified-email flow); issues no credentials',
        tags: ['Discovery'],
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: stripSchemaKey(z.toJSONSchema(AgentAuthRequest, { io: 'input' }) as Json) },
          },
        },
        responses: {
          202: {
            description:
              'Intent recorded: intent_id, status awaiting_human, credentials_issued false, human_action_required[], relay_message',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          400: errorResponse('Validation failed'),
          413: errorResponse('BODY_TOO_LARGE: more than 16 KiB'),
          429: errorResponse('More than the per-IP budget of sign-in intents per minute'),
        },
      },
    },
  };
  for (const doc of DISCOVERY_DOCUMENTS) {
    const schema = doc.contentType.startsWith('application/json') ? { type: 'object' } : { type: 'string' };
    paths[doc.path] = {
      servers: site,
      get: {
        operationId: `discovery_${doc.key}`,
        summary: doc.title,
        description: doc.description,
        tags: ['Discovery'],
        security: [],
        responses: { 200: { description: doc.title, content: { [doc.contentType.split(';')[0]]: { schema } } } },
      },
    };
  }
  return paths;
}

function stripSchemaKey(schema: Json): Json {
  delete schema.$schema;
  return schema;
}
