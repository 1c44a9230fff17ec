// The statuses every route can answer because of what the router does before and around its
// handler (api/router.ts), derived from the route definition and its row in
// domain/shared/access.ts, so that no route writes them by hand and a new route has them the
// day it is mounted: 400 (the request does not validate; missing X-Service-MD-Version),
// 401 (the key), 403 (the key's kind, environment or scopes), 409 (a stale
// X-Service-MD-Version), 413 (a body over the limit), 429 (the rate limit) and 500. A route
// documents only what its handler adds (404, 409, 422, 503, ...); where it documents one of
// these statuses too, its own description is kept and the router's cause is added to it.
import type { Access } from '../../domain/shared/access';
import type { KeyKind } from '../../domain/accounts/keys';
import type { RouteDef } from '../route';

const ALL_KINDS: KeyKind[] = ['member', 'member_test', 'agent', 'agent_test', 'facility'];
const AGENT_KINDS: KeyKind[] = ['agent', 'agent_test'];

/** The reasons the router gives a refused key kind (api/router.ts kindRefusal). */
function kindReason(callers: KeyKind[]): string {
  const only = (kinds: KeyKind[]) => callers.every((k) => kinds.includes(k));
  if (only(['member', 'member_test'])) return 'member_key_required';
  if (only(['agent', 'agent_test'])) return 'agent_key_required';
  if (only(['facility'])) return 'facility_key_required';
  return 'key_kind_not_allowed';
}

/** Status -> description of what the router itself may answer for this route. */
export function routerStatuses(route: RouteDef, access: Access, bodyLimit: number | null): Record<number, string> {
  const out: Record<number, string> = {};
  out[400] =
    'Validation failed: fields[] names each refused path, query or body field (dot-paths)' +
    (access.versionGuard ? '; or SERVICE_MD_VERSION_REQUIRED: an agent key sent no X-Service-MD-Version' : '');
  if (access.callers !== 'public') {
    const reasons = ['token_missing', 'token_malformed', 'token_prefix_unknown', 'key_not_found', 'key_revoked'];
    reasons.push('key_expired', 'member_suspended', 'facility_inactive', 'token_audience_mismatch');
    if (route.path.startsWith('/v1/api-keys')) reasons.push('member_key_required (agent credentials)');
    out[401] = `The key was refused (reason: ${reasons.join(', ')}); WWW-Authenticate names the protected-resource metadata`;

    const forbidden: string[] = [];
    const callers = access.callers;
    if (ALL_KINDS.some((k) => !callers.includes(k))) forbidden.push(kindReason(callers));
    if (access.testOnly) forbidden.push('test_key_required');
    if (access.liveOnly) forbidden.push('live_key_required');
    if (access.sandboxUnsupported) forbidden.push('sandbox_not_supported');
    const scopes = access.scopes ?? access.anyScope;
    if (scopes?.length && callers.some((k) => AGENT_KINDS.includes(k)))
      forbidden.push(
        `insufficient_scope (agent keys need ${access.scopes ? access.scopes.join(' and ') : access.anyScope!.join(' or ')})`,
      );
    if (forbidden.length) out[403] = `Forbidden (reason: ${forbidden.join(', ')})`;
    out[429] =
      'RATE_LIMITED: more requests this minute than the key may make (retryable; Retry-After says when to retry)';
  } else if (access.ipRateLimit) {
    out[429] =
      access.ipRateLimit === 'signup'
        ? 'RATE_LIMITED: more sign-ups from this address this minute than allowed (retryable; Retry-After says when)'
        : 'RATE_LIMITED: more requests from this address this minute than allowed (retryable; Retry-After says when)';
  }
  if (access.versionGuard)
    out[409] = 'SERVICE_MD_VERSION_MISMATCH: X-Service-MD-Version is not the current instructions version';
  if (bodyLimit !== null)
    out[413] = `BODY_TOO_LARGE: the body is larger than ${bodyLimit} bytes; nothing was read or stored`;
  out[500] = 'INTERNAL: an unexpected failure (retryable); quote request_id';
  return out;
}
