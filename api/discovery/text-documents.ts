// Text discovery documents: /llms.txt (llmstxt.org format: title, summary, links),
// /llms-full.txt (every REST route from the route list and every MCP tool from the
// registry) and /agents.txt. All derived from the code so they cannot drift.
import type { Config } from '../../config';
import { accessKey, ENDPOINT_ACCESS } from '../../domain/shared/access';
import { describeAccess } from '../../domain/shared/access-summary';
import { KEY_PREFIXES } from '../../domain/accounts/keys';
import type { RegisteredTool } from '../mcp/registry';
import { MCP_PROTOCOL_VERSION, MCP_SERVER_VERSION } from '../mcp/tools';
import { A2A_PROTOCOL_VERSION, A2A_SKILL_IDS } from '../../domain/a2a/tasks';
import type { RouteDef } from '../route';
import { A2A_PATH, AGENT_AUTH_PATH, DISCOVERY_DOCUMENTS } from './documents';
import { API_SUMMARY, API_TITLE } from './metadata';

function links(config: Config): string[] {
  return DISCOVERY_DOCUMENTS.filter((d) => d.key !== 'llms_txt').map(
    (d) => `- [${d.title}](${config.siteUrl}${d.path}): ${d.description}`,
  );
}

function orientation(config: Config, tools: RegisteredTool[]): string {
  return [
    `REST lives under ${config.baseUrl}/v1 (JSON, multipart for uploads); \`GET ${config.baseUrl}/v1\` lists every endpoint with the keys and scopes it needs.`,
    `The MCP server is at ${config.baseUrl}/mcp (Streamable HTTP, protocol ${MCP_PROTOCOL_VERSION}, server ${MCP_SERVER_VERSION}, ${tools.length} tools); results are in \`structuredContent.result\`.`,
    `The A2A server is at ${config.baseUrl}${A2A_PATH} (JSON-RPC, protocol ${A2A_PROTOCOL_VERSION}; card ${config.siteUrl}/.well-known/agent-card.json): skills ${A2A_SKILL_IDS.join(', ')}; a sent letter is a task that follows its piece.`,
    `Authenticate with \`Authorization: Bearer <API_KEY>\` (${KEY_PREFIXES.map((p) => p.prefix).join(', ')}). Test keys use the sandbox: same calls, nothing charged or printed.`,
    'Agent keys send the current instructions version (`X-Service-MD-Version`, or `service_md_version` over MCP) on calls that change things.',
    'Prepaid credits pay for live mail; agents can read the balance (`GET /v1/credits`) but only a human adds credits.',
  ].join('\n');
}

export function renderLlmsTxt(config: Config, tools: RegisteredTool[]): string {
  return `# ${API_TITLE}

> ${API_SUMMARY}

${orientation(config, tools)}

## Docs

${links(config).join('\n')}

## Connect

- [REST API directory](${config.baseUrl}/v1): every endpoint, its keys and scopes
- [MCP server](${config.baseUrl}/mcp): POST JSON-RPC with \`Authorization: Bearer <API_KEY>\`
- [A2A server](${config.baseUrl}${A2A_PATH}): A2A JSON-RPC (message/send, tasks/get, tasks/cancel, push notifications) with \`Authorization: Bearer <API_KEY>\`
- [Agent sign-in intent](${config.siteUrl}${AGENT_AUTH_PATH}): POST {email, agent_name, purpose}; issues no credentials, tells your human what to do

## Optional

- [Signup](${config.baseUrl}/v1/signup): POST; creates an account for a human (no keys issued)
`;
}

function propertyLines(schema: Record<string, unknown>): string[] {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(props).map(([name, p]) => {
    const type = p.type ?? (p.enum ? 'enum' : p.anyOf ? 'one of several types' : 'any');
    const length =
      p.maxLength === undefined
        ? ''
        : p.minLength !== undefined
          ? `${p.minLength}-${p.maxLength} characters`
          : `at most ${p.maxLength} characters`;
    const detail = [p.enum ? `one of ${(p.enum as unknown[]).join(', ')}` : '', length, p.description ?? '']
      .filter(Boolean)
      .join('; ');
    return `  - \`${name}\` (${type}${required.has(name) ? ', required' : ''})${detail ? `: ${detail}` : ''}`;
  });
}

export function renderLlmsFullTxt(config: Config, routes: RouteDef[], tools: RegisteredTool[]): string {
  const endpoints = routes.map((r) => {
    const a = describeAccess(ENDPOINT_ACCESS[accessKey(r.method, r.path)]);
    const who = a.auth[0] === 'public' ? 'no key' : `keys: ${a.auth.join(', ')}`;
    const scopes = [
      a.scopes.length ? `scopes ${a.scopes.join(' + ')}` : '',
      a.any_scope.length ? `one of ${a.any_scope.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join('; ');
    const guards = [
      a.live_only && 'live keys only',
      a.sandbox_unsupported && 'live keys only (sandbox_not_supported)',
      a.test_only && 'test keys only',
      a.version_guard && 'agent keys send X-Service-MD-Version',
    ]
      .filter(Boolean)
      .join('; ');
    return `### ${r.method.toUpperCase()} ${config.baseUrl}${r.path}\n\n${r.summary}${r.description ? `\n\n${r.description}` : ''}\n\n- ${[who, scopes, guards].filter(Boolean).join('; ')}`;
  });
  const toolText = tools.map((t) => {
    const lines = propertyLines(t.listing.inputSchema);
    return `### ${t.name} (${t.group}${t.deprecated ? `, deprecated: use ${t.deprecated.successor}` : ''})\n\n${t.listing.description}\n\n- REST equivalent: ${t.declaration.access}\n- ${t.mutation ? 'changes things (idempotency_key accepted)' : 'read only'}${lines.length ? `\n- input:\n${lines.join('\n')}` : '\n- input: none'}`;
  });
  return `# ${API_TITLE} — full reference

> ${API_SUMMARY}

${orientation(config, tools)}

## Docs

${links(config).join('\n')}

## REST endpoints (${routes.length})

${endpoints.join('\n\n')}

## MCP tools (${tools.length})

Call with JSON-RPC \`tools/call\` at ${config.baseUrl}/mcp. A result with \`isError: true\` is a refusal; its text starts with the error code or reason.

${toolText.join('\n\n')}
`;
}

export function renderAgentsTxt(config: Config, tools: RegisteredTool[]): string {
  const doc = (key: string) => `${config.siteUrl}${DISCOVERY_DOCUMENTS.find((d) => d.key === key)!.path}`;
  return `# agents.txt — how software agents use ${API_TITLE}
# ${API_SUMMARY}

Name: ${API_TITLE}
API: ${config.baseUrl}/v1
API-Directory: ${config.baseUrl}/v1
MCP: ${config.baseUrl}/mcp
MCP-Protocol-Version: ${MCP_PROTOCOL_VERSION}
MCP-Tools: ${tools.length}
OpenAPI: ${doc('openapi_json')}
Agent-Card: ${doc('a2a_agent_card')}
A2A: ${config.baseUrl}${A2A_PATH}
A2A-Protocol-Version: ${A2A_PROTOCOL_VERSION}
LLMs-Txt: ${doc('llms_txt')}
Auth: Bearer API key, or OAuth with the owner's consent for MCP hosts; see ${doc('auth_md')}
Key-Prefixes: ${KEY_PREFIXES.map((p) => p.prefix).join(' ')}
Sign-In-Intent: POST ${config.siteUrl}${AGENT_AUTH_PATH} (issues no credentials)
Rate-Limit: ${config.rateLimitPerMinute} requests/minute per key
Sandbox: test keys (sk_test_, sk_agent_test_); nothing charged or printed
Contact: ${config.ownerEmail}

# Rules for agents
# - Read your instructions document first (GET /v1/agents/{id}/instructions or MCP get_service_md)
#   and echo its version on calls that change things.
# - Prefer dry_run and X-Max-Cost-Cents (max_cost_cents over MCP) before spending credits.
# - Send an Idempotency-Key (idempotency_key over MCP) with every retryable change.
# - Never buy credits or handle payment details; ask your human (billing_url).
# - Physical receiving addresses are not issued; POST /v1/waitlist only records a reservation.
`;
}
