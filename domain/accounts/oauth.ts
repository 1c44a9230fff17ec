// The rules of OAuth for MCP hosts (OAuth 2.1 as the MCP authorization spec of protocol
// 2025-11-25 profiles it): lifetimes, token formats, redirect URIs (exact match, except the
// port of a loopback redirect, RFC 8252), PKCE (S256 only), the resource indicators this
// server answers to (RFC 8707) and scope lists. Pure: no I/O.
import { createHash } from 'node:crypto';
import { SCOPES, Scope } from '../shared/access';
import { isLoopbackAddress, MAX_URL_LENGTH } from '../webhooks/urls';
import { OAUTH_ACCESS_TOKEN_PREFIX, safeEqual } from './keys';

/** An authorization code is good for 10 minutes and one use. */
export const AUTHORIZATION_CODE_SECONDS = 600;
/** An access token lives one hour. */
export const ACCESS_TOKEN_SECONDS = 3600;
/** A refresh token lives 30 days; every use replaces it with a new one. */
export const REFRESH_TOKEN_SECONDS = 30 * 86_400;
/** A client ID metadata document is fetched again after its Cache-Control max-age, within these bounds. */
export const CLIENT_DOCUMENT_MIN_CACHE_SECONDS = 300;
export const CLIENT_DOCUMENT_MAX_CACHE_SECONDS = 86_400;
export const CLIENT_DOCUMENT_DEFAULT_CACHE_SECONDS = 3600;
/** The largest client ID metadata document read (the draft asks for small documents). */
export const CLIENT_DOCUMENT_MAX_BYTES = 16 * 1024;

export const ACCESS_TOKEN_PREFIX = OAUTH_ACCESS_TOKEN_PREFIX;
export const REFRESH_TOKEN_PREFIX = 'oauth_rt_';
/** Client ids this server assigns at registration; any other client id is the URL of a metadata document. */
export const REGISTERED_CLIENT_PREFIX = 'pmc_';

/** Registration bounds (RFC 7591 sets none; an open endpoint needs them). */
export const MAX_REDIRECT_URIS = 10;
export const MAX_CLIENT_NAME_LENGTH = 100;

/** An RFC 6749 error: the `error` code, its description and the HTTP status the token endpoint answers with. */
export class OAuthRefusal extends Error {
  constructor(
    public readonly error: string,
    description: string,
    public readonly status = 400,
  ) {
    super(description);
    this.name = 'OAuthRefusal';
  }

  toBody(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.message };
  }
}

export const refuse = {
  invalidRequest: (d: string) => new OAuthRefusal('invalid_request', d),
  invalidClient: (d: string) => new OAuthRefusal('invalid_client', d, 401),
  invalidGrant: (d: string) => new OAuthRefusal('invalid_grant', d),
  invalidScope: (d: string) => new OAuthRefusal('invalid_scope', d),
  invalidTarget: (d: string) => new OAuthRefusal('invalid_target', d),
  unsupportedGrantType: (d: string) => new OAuthRefusal('unsupported_grant_type', d),
  unsupportedResponseType: (d: string) => new OAuthRefusal('unsupported_response_type', d),
  unsupportedTokenType: (d: string) => new OAuthRefusal('unsupported_token_type', d),
  invalidClientMetadata: (d: string) => new OAuthRefusal('invalid_client_metadata', d),
  invalidRedirectUri: (d: string) => new OAuthRefusal('invalid_redirect_uri', d),
  accessDenied: (d: string) => new OAuthRefusal('access_denied', d, 403),
};

// ---------------------------------------------------------------- redirect URIs

function loopbackLiteral(url: URL): boolean {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return (host === '127.0.0.1' || host === '::1') && isLoopbackAddress(host);
}

/**
 * Why a redirect URI cannot be registered, or null. Allowed: https; http on this machine's
 * loopback (127.0.0.1, [::1], localhost) for native apps; a private-use scheme with a dot
 * in it (`com.example.app:/callback`, RFC 8252 7.1). Never a fragment, credentials, or a
 * scheme a browser runs (javascript:, data:, ...).
 */
export function redirectUriProblem(raw: string): string | null {
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URI';
  }
  if (url.hash || raw.includes('#')) return 'must not contain a fragment';
  if (url.username || url.password) return 'must not contain credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') {
    const host = url.hostname;
    return loopbackLiteral(url) || host === 'localhost'
      ? null
      : 'must use https (http only on the loopback interface: 127.0.0.1, [::1] or localhost)';
  }
  const scheme = url.protocol.slice(0, -1);
  if (!/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+$/.test(scheme))
    return 'must use https, http on the loopback interface, or a private-use scheme in reverse domain form (com.example.app:)';
  return null;
}

/**
 * Whether the redirect URI of a request is one of the client's: exactly, or, for a loopback
 * IP literal over http (RFC 8252 7.3), the same URI on any port.
 */
export function redirectUriRegistered(presented: string, registered: readonly string[]): boolean {
  if (registered.includes(presented)) return true;
  let url: URL;
  try {
    url = new URL(presented);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !loopbackLiteral(url) || presented.includes('#')) return false;
  const withoutPort = (u: URL) => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  return registered.some((r) => {
    try {
      const candidate = new URL(r);
      return (
        candidate.protocol === 'http:' && loopbackLiteral(candidate) && withoutPort(candidate) === withoutPort(url)
      );
    } catch {
      return false;
    }
  });
}

/** The redirect with the authorization response (or error) appended to its query (RFC 6749 4.1.2, RFC 9207 iss). */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

// ---------------------------------------------------------------- PKCE

const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

/** Why a code challenge cannot be used, or null: S256 only (OAuth 2.1; `plain` is refused). */
export function codeChallengeProblem(challenge: string | undefined, method: string | undefined): string | null {
  if (!challenge) return 'code_challenge is required (PKCE with S256)';
  if (method !== 'S256')
    return method ? `code_challenge_method ${method} is not supported: use S256` : 'code_challenge_method must be S256';
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge))
    return 'code_challenge must be the base64url SHA-256 of the code verifier (43 characters)';
  return null;
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/** Whether the code verifier is the one the challenge was made from. */
export function codeVerifierMatches(verifier: string | undefined, challenge: string): boolean {
  return typeof verifier === 'string' && PKCE_VALUE.test(verifier) && safeEqual(s256(verifier), challenge);
}

// ---------------------------------------------------------------- resources (RFC 8707)

export interface ProtectedResources {
  /** `{base_url}`: REST and MCP. */
  api: string;
  /** `{base_url}/mcp`: the MCP server only. */
  mcp: string;
}

/** The resources of a deployment whose `{base_url}` is `baseUrl`. */
export function protectedResourcesOf(baseUrl: string): ProtectedResources {
  const api = baseUrl.replace(/\/+$/, '');
  return { api, mcp: `${api}/mcp` };
}

/** Lower-case scheme and host, no trailing slash: the form this server compares resource indicators in. */
export function canonicalResource(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.hash || raw.includes('#') || url.search || url.username || url.password) return null;
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}`;
}

/** The audience a resource indicator names, or null when it is not one of this server's resources. */
export function resourceAudience(raw: string, resources: ProtectedResources): string | null {
  const canonical = canonicalResource(raw);
  if (!canonical) return null;
  for (const r of [resources.api, resources.mcp]) if (canonicalResource(r) === canonical) return canonicalResource(r);
  return null;
}

/** Whether a token for `audience` may be used on `target` ('rest' needs the API audience; MCP takes either). */
export function audienceCovers(audience: string, target: 'rest' | 'mcp', resources: ProtectedResources): boolean {
  const api = canonicalResource(resources.api);
  const mcp = canonicalResource(resources.mcp);
  return target === 'mcp' ? audience === api || audience === mcp : audience === api;
}

// ---------------------------------------------------------------- scopes

/** The scopes a space-separated list names: the known ones, and the unknown ones apart. */
export function parseScopes(raw: string | undefined | null): { known: Scope[]; unknown: string[] } {
  const words = (raw ?? '').split(/\s+/).filter(Boolean);
  const known = [...new Set(words.filter((w): w is Scope => (SCOPES as readonly string[]).includes(w)))];
  const unknown = [...new Set(words.filter((w) => !(SCOPES as readonly string[]).includes(w)))];
  return { known, unknown };
}

/** The host a person should read on the consent page: the redirect's host, or its scheme for a native app. */
export function redirectHost(redirectUri: string): string {
  const url = new URL(redirectUri);
  return url.host || `${url.protocol}`;
}
