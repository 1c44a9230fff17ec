// The WWW-Authenticate answer of a refused Bearer request (RFC 6750 3, RFC 9728 5.1): where
// the protected-resource metadata of the resource is, so that an MCP host or OAuth client can
// find the authorization server, with the scopes the request needs where the route knows
// them, and `error` when a presented OAuth token was the problem.
import type { Config } from '../config';
import { ApiError } from '../domain/shared/errors';
import type { ResourceTarget } from '../services/accounts/auth';
import { OAUTH_ACCESS_TOKEN_PREFIX } from '../domain/accounts/keys';

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** RFC 9728 3.1: the metadata of `{base_url}/mcp` sits at the well-known path followed by the resource's path. */
export function protectedResourceMetadataPath(config: Config, target: ResourceTarget): string {
  return target === 'mcp' ? `${PROTECTED_RESOURCE_PATH}${config.apiPrefix}/mcp` : PROTECTED_RESOURCE_PATH;
}

export interface Challenge {
  error?: 'invalid_token' | 'insufficient_scope';
  scopes?: readonly string[];
  description?: string;
}

export function bearerChallenge(config: Config, target: ResourceTarget, challenge: Challenge = {}): string {
  const quote = (v: string) => `"${v.replace(/["\\]/g, '')}"`;
  const parts = [`resource_metadata=${quote(`${config.siteUrl}${protectedResourceMetadataPath(config, target)}`)}`];
  if (challenge.error) parts.push(`error=${quote(challenge.error)}`);
  if (challenge.scopes?.length) parts.push(`scope=${quote(challenge.scopes.join(' '))}`);
  if (challenge.description) parts.push(`error_description=${quote(challenge.description)}`);
  return `Bearer ${parts.join(', ')}`;
}

/** The same refusal with the challenge added: 401s always; 403 insufficient_scope for OAuth tokens (RFC 6750 3.1). */
export function withChallenge(
  err: unknown,
  config: Config,
  target: ResourceTarget,
  authorization: string | undefined,
  scopes?: readonly string[],
): unknown {
  if (!(err instanceof ApiError)) return err;
  const oauthToken = new RegExp(`^\\s*Bearer\\s+${OAUTH_ACCESS_TOKEN_PREFIX}`, 'i').test(authorization ?? '');
  let header: string | null = null;
  if (err.status === 401) {
    header = bearerChallenge(config, target, {
      error: oauthToken ? 'invalid_token' : undefined,
      scopes,
      description: oauthToken ? err.message : undefined,
    });
  } else if (err.status === 403 && err.options.reason === 'insufficient_scope' && oauthToken) {
    const required = (err.options.details?.required_scopes as string[] | undefined) ?? scopes;
    header = bearerChallenge(config, target, { error: 'insufficient_scope', scopes: required });
  }
  if (!header) return err;
  return new ApiError(err.status, err.message, {
    ...err.options,
    headers: { ...err.options.headers, 'WWW-Authenticate': header },
  } as typeof err.options);
}
