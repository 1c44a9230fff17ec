// JSON discovery metadata: the A2A agent card (the A2A server's skills, api/a2a/) and
// the OAuth metadata documents. Agents use API keys issued by a member; MCP hosts (and
// other OAuth clients) get access tokens with the owner's consent, each acting as the
// agent credential of its grant (services/accounts/oauth.ts).
import type { Config } from '../../config';
import { SCOPES } from '../../domain/shared/access';
import { KEY_PREFIXES } from '../../domain/accounts/keys';
import type { AgentCard } from '@a2a-js/sdk';
import { A2A_PROTOCOL_VERSION, A2A_SKILLS } from '../../domain/a2a/tasks';
import { MCP_PROTOCOL_VERSION, MCP_SERVER_VERSION } from '../mcp/tools';
import { API_VERSION } from './openapi';
import { A2A_PATH, AGENT_AUTH_PATH } from './documents';
import { AUTHORIZE_PATH, OAUTH_PATHS } from '../oauth/paths';

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
        bearerFormat: 'API key or OAuth access token',
        description: `API key (${KEY_LIST}); test keys use the sandbox. Keys come from a member: see ${config.siteUrl}/auth.md; agents without one: POST ${config.siteUrl}${AGENT_AUTH_PATH}. An OAuth access token (oauth2 below) is sent the same way.`,
      },
      oauth2: {
        type: 'oauth2',
        description: 'An access token with the owner’s consent, acting as one agent credential',
        oauth2MetadataUrl: `${config.siteUrl}/.well-known/oauth-authorization-server`,
        flows: {
          authorizationCode: {
            authorizationUrl: `${config.siteUrl}${AUTHORIZE_PATH}`,
            tokenUrl: `${config.siteUrl}${OAUTH_PATHS.token}`,
            refreshUrl: `${config.siteUrl}${OAUTH_PATHS.token}`,
            scopes: Object.fromEntries(SCOPES.map((s) => [s, s])),
          },
        },
      },
    },
    security: [{ bearer: [] }, { oauth2: [] }],
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

/** RFC 9728: the API (REST and MCP) as a resource protected by Bearer API keys and OAuth access tokens. */
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
 * RFC 9728 for the MCP server alone, at the well-known path followed by its own path: the
 * `resource` is the URL MCP hosts connect to, so the token they ask for is bound to it.
 */
export function mcpProtectedResourceMetadata(config: Config) {
  return {
    ...protectedResourceMetadata(config),
    resource: `${config.baseUrl}/mcp`,
    resource_name: `${API_TITLE} MCP server`,
  };
}

/**
 * RFC 8414 for MCP hosts (the MCP authorization spec of 2025-11-25): the authorization code
 * flow with PKCE (S256) and refresh tokens, public clients registered dynamically or known
 * by a client ID metadata document. Agents' own API keys still come from a signed-in
 * member, as `api_key_issuance` explains.
 */
export function authorizationServerMetadata(config: Config) {
  const site = config.siteUrl;
  return {
    issuer: site,
    authorization_endpoint: `${site}${AUTHORIZE_PATH}`,
    token_endpoint: `${site}${OAUTH_PATHS.token}`,
    registration_endpoint: `${site}${OAUTH_PATHS.register}`,
    revocation_endpoint: `${site}${OAUTH_PATHS.revoke}`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    client_id_metadata_document_supported: true,
    authorization_response_iss_parameter_supported: true,
    scopes_supported: [...SCOPES],
    service_documentation: `${site}/auth.md`,
    api_key_issuance: {
      token_type: 'Bearer API key',
      key_prefixes: KEY_PREFIXES.map((p) => p.prefix),
      how: 'A human signs up (POST /v1/signup), verifies the email and adds a payment method; with the member key they create an agent (POST /v1/agents) and an agent key (POST /v1/agents/{id}/credentials) and give it to the agent.',
      signup_endpoint: `${config.baseUrl}/v1/signup`,
      agent_sign_in_intent_endpoint: `${config.siteUrl}${AGENT_AUTH_PATH}`,
      credentials_endpoint: `${config.baseUrl}/v1/agents/{id}/credentials`,
    },
  };
}
