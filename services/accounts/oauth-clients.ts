// OAuth clients of MCP hosts: dynamic registration (RFC 7591; public clients only, no
// secret, bounded by domain/accounts/oauth-metadata.ts) and clients known by the URL of
// their client ID metadata document, fetched under the webhook address rules
// (services/webhooks/http.ts) and cached for the document's Cache-Control max-age within
// bounds. Every OAuth endpoint finds its client through resolveClient.
import type { Deps } from '../shared/deps';
import { generateSecret } from '../../domain/accounts/keys';
import {
  CLIENT_DOCUMENT_DEFAULT_CACHE_SECONDS,
  CLIENT_DOCUMENT_MAX_BYTES,
  CLIENT_DOCUMENT_MAX_CACHE_SECONDS,
  redirectHost,
  refuse,
  OAuthRefusal,
  REGISTERED_CLIENT_PREFIX,
} from '../../domain/accounts/oauth';
import { ClientMetadata, ClientMetadataDocument, describeIssues } from '../../domain/accounts/oauth-metadata';
import { isLoopbackHost, MAX_URL_LENGTH } from '../../domain/webhooks/urls';
import { fetchPublicDocument } from '../webhooks/http';
import { consumeRateLimit } from '../shared/rate-limit';
import { sqlRows } from '../shared/sql';

/** A client ID metadata document must answer within this. */
const CLIENT_DOCUMENT_DEADLINE_MS = 5000;

export interface OAuthClient {
  /** The row's id (grants and codes refer to it). */
  id: string;
  /** What the client sends as client_id. */
  clientId: string;
  registration: 'dynamic' | 'metadata_document';
  clientName: string;
  clientUri: string | null;
  redirectUris: string[];
  /** The scopes it said it would ask for at registration, if any. */
  scope: string | null;
}

interface ClientRow {
  id: string;
  client_id: string;
  registration: 'dynamic' | 'metadata_document';
  client_name: string;
  client_uri: string | null;
  redirect_uris: string[];
  metadata: { scope?: string };
  fresh_until: Date | null;
}

const CLIENT_COLUMNS = `id, client_id, registration, client_name, client_uri, redirect_uris, metadata, fresh_until`;

function toClient(row: ClientRow): OAuthClient {
  return {
    id: row.id,
    clientId: row.client_id,
    registration: row.registration,
    clientName: row.client_name,
    clientUri: row.client_uri,
    redirectUris: row.redirect_uris,
    scope: row.metadata.scope ?? null,
  };
}

/** The registration answer (RFC 7591 3.2.1): the client id and every value as registered. */
export type ClientInformation = ClientMetadata & {
  client_id: string;
  client_id_issued_at: number;
  token_endpoint_auth_method: 'none';
};

/**
 * Registers a public client. The server replaces what it does not do (RFC 7591 allows it):
 * token_endpoint_auth_method becomes none and no secret is issued; grant and response types
 * default to the two this server supports.
 */
export async function registerClient(deps: Deps, input: ClientMetadata, ip: string): Promise<ClientInformation> {
  const clientId = generateSecret(REGISTERED_CLIENT_PREFIX, 32);
  const metadata = {
    ...input,
    client_name: input.client_name?.trim() || undefined,
    token_endpoint_auth_method: 'none' as const,
    grant_types: input.grant_types ?? ['authorization_code', 'refresh_token'],
    response_types: input.response_types ?? ['code'],
  };
  const [row] = await sqlRows<{ created_at: Date }>(
    deps.db,
    `INSERT INTO oauth_clients (client_id, registration, client_name, client_uri, redirect_uris, metadata, registered_from_ip)
     VALUES ($1, 'dynamic', $2, $3, $4, $5, $6) RETURNING created_at`,
    [
      clientId,
      metadata.client_name ?? redirectHost(input.redirect_uris[0]),
      input.client_uri ?? null,
      input.redirect_uris,
      JSON.stringify(metadata),
      ip,
    ],
  );
  return { ...metadata, client_id: clientId, client_id_issued_at: Math.floor(row.created_at.getTime() / 1000) };
}

/**
 * Why a client_id cannot be the URL of a metadata document, or null. The draft: https with
 * a path, no fragment, credentials, query or dot segments. WEBHOOKS_ALLOW_INSECURE_LOCAL
 * also lets it be http on this machine's loopback (tests, local development), as it does for
 * webhook receivers.
 */
export function clientDocumentUrlProblem(raw: string, allowInsecureLocal: boolean): string | null {
  if (raw.length > MAX_URL_LENGTH) return 'is too long';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is neither a registered client id nor an https URL';
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const insecureLocal = allowInsecureLocal && url.protocol === 'http:' && isLoopbackHost(host);
  if (url.protocol !== 'https:' && !insecureLocal) return 'must be an https URL';
  if (url.pathname === '/' || url.pathname === '') return 'must have a path';
  if (url.hash || raw.includes('#') || url.search || url.username || url.password)
    return 'must not have a fragment, query or credentials';
  if (/\/\.\.?(\/|$)/.test(url.pathname)) return 'must not contain . or .. path segments';
  return null;
}

function cacheSeconds(cacheControl: string | null): number {
  if (!cacheControl) return CLIENT_DOCUMENT_DEFAULT_CACHE_SECONDS;
  if (/(^|,)\s*(no-store|no-cache)\s*(,|$)/i.test(cacheControl)) return 0;
  const maxAge = /(?:^|,)\s*max-age\s*=\s*(\d+)/i.exec(cacheControl);
  if (!maxAge) return CLIENT_DOCUMENT_DEFAULT_CACHE_SECONDS;
  return Math.min(Number(maxAge[1]), CLIENT_DOCUMENT_MAX_CACHE_SECONDS);
}

async function fetchClientDocument(deps: Deps, url: string, ip: string): Promise<OAuthClient> {
  const budget = await consumeRateLimit(
    deps,
    `ip:oauth-client-document:${ip}`,
    deps.config.oauthRegistrationRateLimitPerMinute,
  );
  if (!budget.allowed) {
    throw new OAuthRefusal(
      'temporarily_unavailable',
      `Too many client metadata documents fetched for this address; retry in ${budget.resetSeconds} seconds`,
      429,
    );
  }
  const fetched = await fetchPublicDocument({
    url,
    allowInsecureLocal: deps.config.webhooksAllowInsecureLocal,
    maxBytes: CLIENT_DOCUMENT_MAX_BYTES,
    deadlineMs: CLIENT_DOCUMENT_DEADLINE_MS,
  });
  if (!fetched.ok) throw refuse.invalidClient(`The client metadata document could not be fetched (${fetched.error})`);
  let json: unknown;
  try {
    json = JSON.parse(fetched.body.toString('utf8'));
  } catch {
    throw refuse.invalidClient('The client metadata document is not JSON');
  }
  const parsed = ClientMetadataDocument.safeParse(json);
  if (!parsed.success)
    throw refuse.invalidClient(`The client metadata document is not valid: ${describeIssues(parsed.error)}`);
  const doc = parsed.data;
  if (doc.client_id !== url)
    throw refuse.invalidClient('The client metadata document names another client_id than its own URL');
  const fresh = cacheSeconds(fetched.cacheControl);
  const [row] = await sqlRows<ClientRow>(
    deps.db,
    `INSERT INTO oauth_clients (client_id, registration, client_name, client_uri, redirect_uris, metadata, fetched_at, fresh_until)
     VALUES ($1, 'metadata_document', $2, $3, $4, $5, now(), now() + make_interval(secs => $6))
     ON CONFLICT (client_id) DO UPDATE SET client_name = EXCLUDED.client_name, client_uri = EXCLUDED.client_uri,
       redirect_uris = EXCLUDED.redirect_uris, metadata = EXCLUDED.metadata, fetched_at = EXCLUDED.fetched_at,
       fresh_until = EXCLUDED.fresh_until
     RETURNING ${CLIENT_COLUMNS}`,
    [url, doc.client_name.trim(), doc.client_uri ?? null, doc.redirect_uris, JSON.stringify(doc), fresh],
  );
  return toClient(row);
}

/**
 * The client a request names: a registered one, or the one whose metadata document is at
 * that URL (from the cache while fresh, fetched otherwise). Unknown: invalid_client.
 */
export async function resolveClient(deps: Deps, clientId: string | undefined, ip: string): Promise<OAuthClient> {
  if (!clientId) throw refuse.invalidRequest('client_id is required');
  if (clientId.startsWith(REGISTERED_CLIENT_PREFIX)) {
    const [row] = await sqlRows<ClientRow>(
      deps.db,
      `SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE client_id = $1 AND registration = 'dynamic'`,
      [clientId],
    );
    if (!row) throw refuse.invalidClient('Unknown client_id: register the client first');
    return toClient(row);
  }
  const problem = clientDocumentUrlProblem(clientId, deps.config.webhooksAllowInsecureLocal);
  if (problem) throw refuse.invalidClient(`Unknown client_id: a client metadata document URL ${problem}`);
  const [cached] = await sqlRows<ClientRow>(
    deps.db,
    `SELECT ${CLIENT_COLUMNS} FROM oauth_clients WHERE client_id = $1 AND registration = 'metadata_document'`,
    [clientId],
  );
  if (cached && cached.fresh_until && cached.fresh_until.getTime() > Date.now()) return toClient(cached);
  return fetchClientDocument(deps, clientId, ip);
}
