// JSON discovery metadata: the A2A agent card (the A2A server's skills, api/a2a/) and
// the OAuth metadata documents. The API's credentials are API keys issued
// to a member, not OAuth tokens; the metadata says so instead of advertising endpoints
// that do not exist.
import type { Config } from '../../config';
import { SCOPES } from '../../domain/shared/access';
import { KEY_PREFIXES } from '../../domain/accounts/keys';
import type { AgentCard } from '@a2a-js/sdk';
import { A2A_PROTOCOL_VERSION, A2A_SKILLS } from '../../domain/a2a/tasks';
import { MCP_PROTOCOL_VERSION, MCP_SERVER_VERSION } from '../mcp/tools';
import { API_VERSION } from './openapi';
import { A2A_PATH, AGENT_AUTH_PATH } from './documents';

export const API_TITLE = 'Postal Mail API';
export const API_SUMMARY =
  'Send and receive physical postal mail from software agents: letters and batches printed and posted by a licensed facility, paid from prepaid credits, with proof photos, tracking, signed webhooks and a sandbox for test keys.';

const KEY_LIST = KEY_PREFIXES.map((p) => p.prefix).join(', ');

/**
 * The A2A agent card (protocol 0.3): the JSON-RPC server at {base_url}/a2a, its four
 * skills (domain/a2a/tasks.ts), push notifications, Bearer keys, and the MCP server as an
 * extension. Served at /.well-known/agent-card.json and /.well-known/agent.json.
 */
export function buildAgentCard(config: Config): AgentCard {
  const url = `${config.baseUrl}${A2A_PATH}`;
  return {
    protocolVersion: A2A_PROTOCOL_VERSION,
    name: API_TITLE,
    description: API_SUMMARY,
    url,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url, transport: 'JSONRPC' }],
    version: API_VERSION,
    provider: { organization: API_TITLE, url: config.siteUrl },
    documentationUrl: `${config.siteUrl}/llms.txt`,
    capabilities: {
      streaming: false,
      pushNotifications: true,
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
      bearer: {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'API key',
        description: `API key (${KEY_LIST}); test keys use the sandbox. Keys come from a member: see ${config.siteUrl}/auth.md; agents without one: POST ${config.siteUrl}${AGENT_AUTH_PATH}`,
      },
    },
    security: [{ bearer: [] }],
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: A2A_SKILLS.map(({ id, name, description, tags, examples, inputModes, outputModes }) => ({
      id,
      name,
      description,
      tags,
      examples,
      inputModes,
      outputModes,
    })),
    supportsAuthenticatedExtendedCard: false,
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
