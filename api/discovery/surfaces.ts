// OpenAPI paths of the surfaces that are not REST routes: the MCP and A2A endpoints under
// the API prefix, the site-root discovery documents, POST /agent/auth and the OAuth endpoints (all
// with a path-level server, since they live at the site root rather than under {base_url}).
import { z } from 'zod';
import type { Config } from '../../config';
import { A2A_PATH, AGENT_AUTH_PATH, DISCOVERY_DOCUMENTS } from './documents';
import { MAX_FREE_FORM_JSON_BYTES, MAX_JSON_DEPTH, MAX_JSON_VALUES } from '../../domain/shared/json-limits';
import { MCP_BODY_LIMIT } from '../mcp/http';
import { A2A_BODY_LIMIT } from '../a2a/limits';
import { A2A_PROTOCOL_VERSION, A2A_SKILL_IDS } from '../../domain/a2a/tasks';
import { MCP_PROTOCOL_VERSION, MCP_PROTOCOL_VERSIONS } from '../mcp/tools';
import { singleLine } from '../schemas/common';
import { toJsonSchema } from '../schemas/json-schema';
import type { ComponentCollector } from './components';
import { ErrorBody } from '../schemas/errors';
import { protectedResourceMetadataPath } from '../bearer-challenge';
import { AUTHORIZE_PATH, OAUTH_PATHS } from '../oauth/paths';
import {
  AuthorizationQuery,
  OAuthErrorBody,
  RegistrationRequest,
  RegistrationResponse,
  RevocationRequest,
  TokenRequest,
  TokenResponse,
} from '../oauth/oauth.schemas';

export const AgentAuthRequest = z.strictObject({
  email: z.email({ message: 'must be an email address' }).max(254),
  agent_name: singleLine(z.string().min(1).max(100)).optional(),
  purpose: z.string().max(1000).optional().describe('what the agent wants to do, shown to the human'),
});

type Json = Record<string, unknown>;

const errorResponse = (description: string): Json => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
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

export function agentSurfacePaths(config: Config, components: ComponentCollector): Record<string, Json> {
  // The refusals below name the error component; converting it once makes sure it is collected.
  components.convert(ErrorBody, 'output');
  const rpc = { $ref: components.add('JsonRpcMessage', JsonRpcMessage) };
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
        requestBody: { required: true, content: { 'application/json': { schema: rpc } } },
        responses: {
          200: { description: 'JSON-RPC response', content: { 'application/json': { schema: rpc } } },
          202: { description: 'Notification accepted' },
          400: {
            description:
              'Unsupported MCP-Protocol-Version (error.data.supported lists the revisions), or a request over the JSON limits outside tool arguments',
            content: { 'application/json': { schema: rpc } },
          },
          413: {
            description: `Body larger than ${MCP_BODY_LIMIT} bytes`,
            content: { 'application/json': { schema: rpc } },
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
        requestBody: { required: true, content: { 'application/json': { schema: rpc } } },
        responses: {
          200: {
            description: 'JSON-RPC response (errors included, as the A2A JSON-RPC binding has them)',
            content: { 'application/json': { schema: rpc } },
          },
          413: {
            description: `Body larger than ${A2A_BODY_LIMIT} bytes`,
            content: { 'application/json': { schema: rpc } },
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
  Object.assign(paths, oauthPaths(config, site));
  for (const doc of DISCOVERY_DOCUMENTS) {
    const schema = doc.contentType.startsWith('application/json') ? { type: 'object' } : { type: 'string' };
    paths[doc.path] = {
      servers: site,
      get: {
        operationId: camelCase(`discovery_${doc.key}`),
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

/** RFC 6749 errors: {error, error_description}, not the API's error shape. */
const oauthError = (description: string): Json => ({
  description,
  content: { 'application/json': { schema: toJsonSchema(OAuthErrorBody, 'output') } },
});

const json = (description: string, schema: z.ZodType): Json => ({
  description,
  content: { 'application/json': { schema: toJsonSchema(schema, 'output') } },
});

const html = (description: string): Json => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });

function oauthPaths(config: Config, site: Json[]): Record<string, Json> {
  const form = (schema: z.ZodType): Json => ({
    required: true,
    content: { 'application/x-www-form-urlencoded': { schema: toJsonSchema(schema, 'input') } },
  });
  const query = toJsonSchema(AuthorizationQuery, 'input');
  const required = new Set((query.required as string[] | undefined) ?? []);
  return {
    [protectedResourceMetadataPath(config, 'mcp')]: {
      servers: site,
      get: {
        operationId: 'discoveryOauthProtectedResourceMcp',
        summary: 'OAuth protected-resource metadata of the MCP server (RFC 9728)',
        description: 'Where the 401 of /mcp points (WWW-Authenticate resource_metadata): resource is {base_url}/mcp.',
        tags: ['OAuth'],
        security: [],
        responses: {
          200: { description: 'RFC 9728 metadata', content: { 'application/json': { schema: { type: 'object' } } } },
        },
      },
    },
    [AUTHORIZE_PATH]: {
      servers: site,
      get: {
        operationId: 'oauthAuthorize',
        summary: 'OAuth authorization endpoint: the owner’s consent page',
        description:
          'An MCP host sends the owner’s browser here (authorization code flow, PKCE S256, RFC 8707 resource required). Signed out: 302 to the console sign-in and back. Signed in: the consent page (agent, environment, scopes, safeguards; approve or deny), whose answer is a 303 to redirect_uri with code, state and iss, or error=access_denied. An unknown client or an unregistered redirect_uri is shown to the owner (400 page); every other problem is a 303 to redirect_uri with error (invalid_request, invalid_scope, invalid_target, unsupported_response_type).',
        tags: ['OAuth'],
        security: [],
        parameters: Object.entries((query.properties ?? {}) as Record<string, Json>).map(([name, schema]) => ({
          name,
          in: 'query',
          required: required.has(name),
          schema,
          ...(schema.description ? { description: schema.description } : {}),
        })),
        responses: {
          200: html('The consent page'),
          302: { description: 'Signed out: to /console/sign-in, which returns here' },
          303: { description: 'A refusal sent back to redirect_uri (error, error_description, state, iss)' },
          400: html('The client or redirect_uri cannot be trusted: the refusal, in words, with its RFC 6749 code'),
          429: html('Too many client metadata documents fetched for this address'),
        },
      },
    },
    [OAUTH_PATHS.register]: {
      servers: site,
      post: {
        operationId: 'oauthRegister',
        summary: 'Dynamic client registration (RFC 7591): a public client, no secret',
        description:
          'token_endpoint_auth_method is answered as none (PKCE instead of a secret); grant types authorization_code and refresh_token. Redirect URIs: https, http on 127.0.0.1/[::1]/localhost, or a private-use scheme (com.example.app:/cb); at most 10. Body at most 16 KiB.',
        tags: ['OAuth'],
        security: [],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: toJsonSchema(RegistrationRequest, 'input') } },
        },
        responses: {
          201: json('Registered: the client information', RegistrationResponse),
          400: oauthError('invalid_redirect_uri or invalid_client_metadata'),
          413: oauthError('invalid_client_metadata: body larger than 16 KiB'),
          429: oauthError('too_many_requests: more registrations per minute from this address than allowed'),
        },
      },
    },
    [OAUTH_PATHS.token]: {
      servers: site,
      post: {
        operationId: 'oauthToken',
        summary: 'Token endpoint: authorization code + PKCE, or refresh token (rotated)',
        description:
          'Access tokens (oauth_at_) last one hour and act as the grant’s agent credential on the resource they were issued for; refresh tokens (oauth_rt_) are good for one use each, and a reused one ends the grant, as does a reused code. Parameters sent twice are refused.',
        tags: ['OAuth'],
        security: [],
        requestBody: form(TokenRequest),
        responses: {
          200: json('Tokens (Cache-Control: no-store)', TokenResponse),
          400: oauthError(
            'invalid_request, invalid_grant (code or refresh token unknown, expired, used, of another client; redirect_uri or code_verifier wrong), invalid_scope, invalid_target, unsupported_grant_type',
          ),
          401: oauthError('invalid_client: unknown client_id, or its metadata document cannot be used'),
          413: oauthError('invalid_request: body larger than 16 KiB'),
          429: oauthError('temporarily_unavailable: too many client metadata documents fetched for this address'),
        },
      },
    },
    [OAUTH_PATHS.revoke]: {
      servers: site,
      post: {
        operationId: 'oauthRevoke',
        summary: 'Token revocation (RFC 7009): either token of a grant ends the grant',
        tags: ['OAuth'],
        security: [],
        requestBody: form(RevocationRequest),
        responses: {
          200: json('Revoked, or the token was not valid anyway', z.object({})),
          400: oauthError(
            'invalid_request, unsupported_token_type, invalid_grant (the token was issued to another client)',
          ),
          401: oauthError('invalid_client'),
          413: oauthError('invalid_request: body larger than 16 KiB'),
        },
      },
    },
  };
}

/** `discovery_llms_txt` -> `discoveryLlmsTxt`: operationIds are camelCase. */
function camelCase(name: string): string {
  return name.replace(/[_.-]+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());
}

function stripSchemaKey(schema: Json): Json {
  delete schema.$schema;
  return schema;
}
