// The documents served at the site root, listed once: the routes that serve them, the
// discovery directory (GET /v1), llms.txt and agents.txt all read this list.

export interface DiscoveryDocument {
  /** Key in the directory's `documents` object. */
  key: string;
  path: string;
  contentType: string;
  title: string;
  description: string;
}

export const DISCOVERY_DOCUMENTS: DiscoveryDocument[] = [
  {
    key: 'openapi_json',
    path: '/openapi.json',
    contentType: 'application/json',
    title: 'OpenAPI (JSON)',
    description: 'OpenAPI 3.1 description of every REST endpoint, generated from the code',
  },
  {
    key: 'openapi_yaml',
    path: '/openapi.yaml',
    contentType: 'application/yaml',
    title: 'OpenAPI (YAML)',
    description: 'The same OpenAPI document as YAML',
  },
  {
    key: 'api_reference',
    path: '/api-docs',
    contentType: 'text/html; charset=utf-8',
    title: 'API reference',
    description: 'Interactive API reference (Swagger UI) rendered from /openapi.json',
  },
  {
    key: 'a2a_agent_card',
    path: '/.well-known/agent-card.json',
    contentType: 'application/json',
    title: 'A2A agent card',
    description:
      'A2A 0.3 agent card: the JSON-RPC A2A server at {base_url}/a2a, its skills (quote, send and track a letter, read the inbox), push notifications and Bearer keys',
  },
  {
    key: 'agent_card',
    path: '/.well-known/agent.json',
    contentType: 'application/json',
    title: "A2A agent card (the spec's name)",
    description: 'The same agent card as /.well-known/agent-card.json, at the path the spec names',
  },
  {
    key: 'llms_txt',
    path: '/llms.txt',
    contentType: 'text/plain; charset=utf-8',
    title: 'llms.txt',
    description: 'Short orientation for language models, with links',
  },
  {
    key: 'llms_full_txt',
    path: '/llms-full.txt',
    contentType: 'text/plain; charset=utf-8',
    title: 'llms-full.txt',
    description: 'Every REST endpoint and every MCP tool with its input',
  },
  {
    key: 'agents_txt',
    path: '/agents.txt',
    contentType: 'text/plain; charset=utf-8',
    title: 'agents.txt',
    description: 'Where agents connect and the rules they follow',
  },
  {
    key: 'auth_md',
    path: '/auth.md',
    contentType: 'text/markdown; charset=utf-8',
    title: 'auth.md',
    description: 'How API keys work: kinds, prefixes, scopes, 401 reasons, test mode',
  },
  {
    key: 'oauth_protected_resource',
    path: '/.well-known/oauth-protected-resource',
    contentType: 'application/json',
    title: 'OAuth protected-resource metadata',
    description:
      'RFC 9728 metadata of the API ({base_url}) as a Bearer-protected resource; the MCP server has its own at /.well-known/oauth-protected-resource{API prefix}/mcp',
  },
  {
    key: 'oauth_authorization_server',
    path: '/.well-known/oauth-authorization-server',
    contentType: 'application/json',
    title: 'OAuth authorization-server metadata',
    description:
      'RFC 8414 metadata: authorization code with PKCE (S256) and refresh tokens for MCP hosts, dynamic registration, client ID metadata documents, revocation',
  },
];

/** Where the A2A server answers JSON-RPC, under the API prefix ({base_url}/a2a). */
export const A2A_PATH = '/a2a';

/** The sign-in intent endpoint at the site root (POST, no key). */
export const AGENT_AUTH_PATH = '/agent/auth';

/** `{key: absolute URL}` for the directory and onboarding answers. */
export function discoveryDocumentUrls(siteUrl: string): Record<string, string> {
  return Object.fromEntries(DISCOVERY_DOCUMENTS.map((d) => [d.key, `${siteUrl}${d.path}`]));
}
