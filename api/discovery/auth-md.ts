// /auth.md: how keys work, generated from the key formats (domain/accounts/keys.ts) and the access
// table (domain/shared/access.ts) so that it lists exactly the prefixes, scopes and per-endpoint
// rules the router enforces.
import type { Config } from '../../config';
import { ENDPOINT_ACCESS, Scope, SCOPES } from '../../domain/shared/access';
import { renderAccessTable } from '../../domain/shared/access-summary';
import { KEY_PREFIX_LENGTH, KEY_PREFIXES, KeyKind } from '../../domain/accounts/keys';
import { AGENT_AUTH_PATH } from './documents';
import { ACCESS_TOKEN_PREFIX } from '../../domain/accounts/oauth';
import { protectedResourceMetadataPath } from '../bearer-challenge';
import { OAUTH_PATHS } from '../oauth/paths';

const KIND_TEXT: Record<KeyKind, string> = {
  member:
    'Member key (live). Every scope; lists span all agents unless `?agent_id=` is given. Created at signup and with `POST /v1/api-keys`.',
  member_test: 'Member test key (`environment: test` on `POST /v1/api-keys`). Sandbox: no charge, no printing.',
  agent:
    "Agent key (live). One agent's resources, the scopes it was created with. Created by a member key with `POST /v1/agents/{id}/credentials`.",
  agent_test: 'Agent test key (`environment: test`). Agent scopes plus the sandbox.',
  facility: 'Facility key, for the scanner and print-floor apps of one facility. Created by an operator.',
};

const SCOPE_TEXT: Record<Scope, string> = {
  'mailbox.read': 'read mailboxes',
  'mailbox.write': 'change mailbox settings',
  'package.read': 'read physical packages',
  'package.write': 'package actions, tags, notes',
  'forward.create': 'forward packages',
  'scan.create': 'request package scans',
  'mail.send': 'outbound mail, batches, credits and usage reads',
  'inbound.read': 'forwarded inbound context (aliases, items, threads)',
  'billing.read': 'credits and usage',
  'webhook.manage': 'webhook settings and custom endpoints',
  'webhook.read': 'webhook event log and deliveries',
  'agent.read': 'read the agent profile and agent-inbox context',
  'agent.write': 'change the agent profile, propose instructions edits',
  'message.send': 'support tickets and facility messages',
  'agent.inbox.read': 'read assigned inbound mail',
  'agent.inbox.report': 'report agent-inbox outcomes',
  'agent.inbox.propose': 'propose handling of assigned mail',
  'inbound.item.read': 'managed-mailbox items',
  'inbound.item.scan.read': 'managed-mailbox scans and OCR',
};

const REASONS_401: Array<[string, string]> = [
  ['token_missing', 'No `Authorization` header.'],
  ['token_malformed', 'Not `Bearer <key>`, or the key has characters a key never has.'],
  ['token_prefix_unknown', `The key does not start with ${KEY_PREFIXES.map((p) => `\`${p.prefix}\``).join(', ')}.`],
  ['key_not_found', 'No key with this value exists.'],
  ['key_revoked', 'The key was revoked (or rotated).'],
  ['key_expired', 'The key passed its `expires_at`.'],
  ['member_suspended', 'The account that owns the key is suspended.'],
  ['facility_inactive', 'The facility of a facility key is inactive.'],
  ['member_key_required', 'An agent credential called `/v1/api-keys` (member keys only).'],
  [
    'token_audience_mismatch',
    'An OAuth access token issued for another resource (a token for `{base_url}/mcp` used on REST).',
  ],
];

const REASONS_403: Array<[string, string]> = [
  ['insufficient_scope', 'The agent key lacks a scope the endpoint needs; `details.required_scopes` names it.'],
  [
    'live_key_required',
    'A test key called a live-only setting (agent PATCH/DELETE, webhook settings, event history, key rotation).',
  ],
  ['sandbox_not_supported', 'A test key called physical inbound custody (packages), which is live-only.'],
  ['test_key_required', 'A live key called a sandbox helper (advance, seed, reset).'],
  ['member_key_required / agent_key_required / facility_key_required', 'The endpoint is for another kind of key.'],
];

export function renderAuthMd(config: Config): string {
  const { siteUrl, baseUrl } = config;
  const table = (rows: Array<[string, string]>) =>
    ['| reason | meaning |', '|---|---|', ...rows.map(([r, m]) => `| \`${r}\` | ${m} |`)].join('\n');
  return `# Authentication — Postal Mail API

Every request except signup, waitlist, lead status and the discovery documents sends

    Authorization: Bearer <API_KEY>

to ${baseUrl}/v1/... (REST) and ${baseUrl}/mcp (MCP). Keys are shown once, when created
(\`key\`); afterwards only \`key_prefix\` (the first ${KEY_PREFIX_LENGTH} characters) identifies them. A key may
carry an expiry (\`expires_in_days\`). Keys are stored as SHA-256 hashes.

Keys are API keys issued to a signed-in human (member), who creates agent keys for their
agents. An agent that has no key can record a sign-in intent with
\`POST ${siteUrl}${AGENT_AUTH_PATH}\` (body \`{"email", "agent_name", "purpose"}\`); it issues no
credentials and says what the human must do next.

## OAuth for MCP hosts

An MCP host connects by URL (${baseUrl}/mcp) and OAuth 2.1 as the MCP authorization spec
(2025-11-25) describes it: the 401 names \`${siteUrl}${protectedResourceMetadataPath(config, 'mcp')}\`, whose
authorization server (${siteUrl}, metadata at \`/.well-known/oauth-authorization-server\`) offers
dynamic registration (\`POST ${siteUrl}${OAUTH_PATHS.register}\`, public clients) or client ID
metadata documents, the authorization code flow with PKCE (S256) and the \`resource\` parameter
(required: ${baseUrl}/mcp, or ${baseUrl} for REST and MCP), refresh tokens rotated on every use
(a reused one ends the grant) and revocation (\`POST ${siteUrl}${OAUTH_PATHS.revoke}\`). The
owner consents on a console page, choosing the agent, environment, scopes and safeguards; the
access token (\`${ACCESS_TOKEN_PREFIX}\`, one hour) then acts exactly as that agent credential, on the
resource it was issued for.

## Kinds of key

| prefix | kind |
|---|---|
${KEY_PREFIXES.map((p) => `| \`${p.prefix}\` | ${KIND_TEXT[p.kind]} |`).join('\n')}

Agent keys must send \`X-Service-MD-Version\` (the current version of the agent's instructions
document, from \`GET /v1/agents/{id}/instructions\`) on mutating calls marked below: 400
\`SERVICE_MD_VERSION_REQUIRED\` when missing, 409 \`SERVICE_MD_VERSION_MISMATCH\` when stale. Over
MCP the same value goes in the tool input as \`service_md_version\`.

## Scopes (agent keys)

Member keys carry every scope. Agent keys carry the scopes they were created with.

| scope | allows |
|---|---|
${SCOPES.map((s) => `| \`${s}\` | ${SCOPE_TEXT[s]} |`).join('\n')}

## Refusals

401 (authentication), body \`{"error", "reason"}\`:

${table(REASONS_401)}

403 (authorization), body \`{"error", "reason"}\`:

${table(REASONS_403)}

Rate limit: ${config.rateLimitPerMinute} requests per minute per key (429 with \`Retry-After\`).

## Test mode

Test keys (\`sk_test_\`, \`sk_agent_test_\`) call the same endpoints with the same bodies: full
validation and real cost calculation, \`cost_cents\` 0, \`estimated_live_cost_cents\` returned, no
charge, no facility fulfillment, signed webhooks still fire. Every response carries
\`test_mode\` and the header \`X-Test-Mode\`. Test records never mix with live records.

## Every endpoint

${renderAccessTable(ENDPOINT_ACCESS)}
`;
}
