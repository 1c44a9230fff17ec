// JSON discovery metadata: the A2A agent card (skills derived from the MCP tool
// registry) and the OAuth metadata documents. The API's credentials are API keys issued
// to a member, not OAuth tokens; the metadata says so instead of advertising endpoints
// that do not exist.
import type { Config } from '../../config';
import { SCOPES } from '../../domain/shared/access';
import { KEY_PREFIXES } from '../../domain/accounts/keys';
import type { RegisteredTool } from '../mcp/registry';
import { MCP_PROTOCOL_VERSION, MCP_SERVER_VERSION, MCP_TOOL_GROUPS, McpToolGroup } from '../mcp/tools';
import { API_VERSION } from './openapi';
import { AGENT_AUTH_PATH } from './documents';

export const API_TITLE = 'Postal Mail API';
export const API_SUMMARY =
  'Send and receive physical postal mail from software agents: letters and batches printed and posted by a licensed facility, paid from prepaid credits, with proof photos, tracking, signed webhooks and a sandbox for test keys.';

const KEY_LIST = KEY_PREFIXES.map((p) => p.prefix).join(', ');

function skillName(group: string): string {
  return group
    .split('_')
    .map((w, i) => (i === 0 ? w[0].toUpperCase() + w.slice(1) : w))
    .join(' ');
}

/** A2A agent card: one skill per MCP tool group that this server serves. */
export function buildAgentCard(config: Config, tools: RegisteredTool[]) {
  const groups = new Map<string, RegisteredTool[]>();
  for (const t of tools) groups.set(t.group, [...(groups.get(t.group) ?? []), t]);
  return {
    protocolVersion: '0.3.0',
    name: API_TITLE,
    description: API_SUMMARY,
    url: `${config.baseUrl}/v1`,
    preferredTransport: 'HTTP+JSON',
    version: API_VERSION,
    provider: { organization: API_TITLE, url: config.siteUrl },
    documentationUrl: `${config.siteUrl}/llms.txt`,
    capabilities: {
      streaming: false,
      pushNotifications: false,
      stateTransitionHistory: false,
      extensions: [
        {
          uri: `https://modelcontextprotocol.io/specification/${MCP_PROTOCOL_VERSION}`,
          description: 'The same operations as MCP tools (Streamable HTTP, stateless, Bearer API key).',
          required: false,
          params: {
            url: `${config.baseUrl}/mcp`,
            protocol_version: MCP_PROTOCOL_VERSION,
            server_version: MCP_SERVER_VERSION,
          },
        },
      ],
    },
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer', description: `API key (${KEY_LIST}); see ${config.siteUrl}/auth.md` },
    },
    security: [{ bearer: [] }],
    // Older agent-card readers look for this field.
    authentication: {
      schemes: ['Bearer'],
      credentials: `API key issued by a member; no OAuth token endpoint. Agents without a key: POST ${config.siteUrl}${AGENT_AUTH_PATH}`,
    },
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: [...groups.entries()].map(([group, members]) => ({
      id: group,
      name: skillName(group),
      description: `${MCP_TOOL_GROUPS[group as McpToolGroup]}. MCP tools: ${members.map((t) => t.name).join(', ')}.`,
      tags: [group, ...members.map((t) => t.name)],
      inputModes: ['application/json'],
      outputModes: ['application/json'],
    })),
  };
}

/** RFC 9728: the API (REST and MCP) as a resource protected by Bearer API keys. */
export function protectedResourceMetadata(config: Config) {
  return {
    resource: config.baseUrl,
    resource_name: API_TITLE,
    authorization_servers: [config.siteUrl],
    bearer_methods_supported: ['header'],
    scopes_supported: [...SCOPES],
    resource_documentation: `${config.siteUrl}/auth.md`,
  };
}

/**
 * RFC 8414. No grant type is supported (so neither an authorization nor a token
 * endpoint exists); keys come from a signed-in member, as `api_key_issuance` explains.
 */
export function authorizationServerMetadata(config: Config) {
  return {
    issuer: config.siteUrl,
    response_types_supported: [] as string[],
    grant_types_supported: [] as string[],
    scopes_supported: [...SCOPES],
    service_documentation: `${config.siteUrl}/auth.md`,
    api_key_issuance: {
      token_type: 'Bearer API key',
      key_prefixes: KEY_PREFIXES.map((p) => p.prefix),
      oauth_token_endpoint: null,
      how: 'A human signs up (POST /v1/signup), verifies the email and adds a payment method; with the member key they create an agent (POST /v1/agents) and an agent key (POST /v1/agents/{id}/credentials) and give it to the agent.',
      signup_endpoint: `${config.baseUrl}/v1/signup`,
      agent_sign_in_intent_endpoint: `${config.siteUrl}${AGENT_AUTH_PATH}`,
      credentials_endpoint: `${config.baseUrl}/v1/agents/{id}/credentials`,
    },
  };
}
