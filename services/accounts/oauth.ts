// OAuth grants for MCP hosts: the authorization request's checks, the owner's consent
// (an authorization code), the token endpoint (code + PKCE, refresh with rotation and
// reuse detection), revocation (RFC 7009), and the owner's list of grants. A grant owns one
// agent credential that carries the scopes, environment and safeguards the owner chose, so
// an access token acts exactly as that credential (services/accounts/auth.ts); ending the
// grant revokes the credential, and revoking the credential (or archiving the agent, or
// suspending the member) ends the grant. Codes and tokens are stored only as SHA-256.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import { generateSecret, hashKey } from '../../domain/accounts/keys';
import {
  ACCESS_TOKEN_PREFIX,
  ACCESS_TOKEN_SECONDS,
  AUTHORIZATION_CODE_SECONDS,
  codeChallengeProblem,
  codeVerifierMatches,
  OAuthRefusal,
  parseScopes,
  protectedResourcesOf,
  redirectUriRegistered,
  redirectWith,
  REFRESH_TOKEN_PREFIX,
  REFRESH_TOKEN_SECONDS,
  refuse,
  resourceAudience,
} from '../../domain/accounts/oauth';
import { SCOPES, Scope } from '../../domain/shared/access';
import type { OAuthClient } from './oauth-clients';
import { resolveClient } from './oauth-clients';
import { sqlRows, sqlRun } from '../shared/sql';
import { insertOAuthGrantCredential, revokeGrantCredential } from './agent-credential-rows';
import { insertGrant, markGrantEnded } from './oauth-grant-rows';

type Db = Pick<EntityManager, 'query'>;

/** A refusal at the authorization endpoint; with `redirectUri` it goes back to the client, without it the owner reads it. */
export class AuthorizationRefusal extends OAuthRefusal {
  constructor(
    refusal: OAuthRefusal,
    public readonly redirectUri?: string,
    public readonly state?: string,
  ) {
    super(refusal.error, refusal.message, refusal.status);
  }
}

export interface AuthorizationParams {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  state?: string;
  scope?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  resource?: string;
}

export interface CheckedAuthorization {
  client: OAuthClient;
  redirectUri: string;
  state?: string;
  codeChallenge: string;
  /** The canonical resource indicator the tokens will be bound to. */
  resource: string;
  /** What the client asked for; the owner may grant these or fewer. */
  requestedScopes: Scope[];
  params: AuthorizationParams;
}

/**
 * Checks an authorization request in RFC 6749 4.1.2.1's order: a client or redirect URI
 * that cannot be trusted is shown to the owner (never redirected to); every other problem
 * is sent back to the client's redirect URI.
 */
export async function checkAuthorizationRequest(
  deps: Deps,
  params: AuthorizationParams,
  ip: string,
): Promise<CheckedAuthorization> {
  let client: OAuthClient;
  try {
    client = await resolveClient(deps, params.client_id, ip);
  } catch (err) {
    if (err instanceof OAuthRefusal) throw new AuthorizationRefusal(err);
    throw err;
  }
  if (!params.redirect_uri) throw new AuthorizationRefusal(refuse.invalidRequest('redirect_uri is required'));
  if (!redirectUriRegistered(params.redirect_uri, client.redirectUris)) {
    throw new AuthorizationRefusal(refuse.invalidRequest('redirect_uri is not one of the client’s redirect URIs'));
  }
  const back = (refusal: OAuthRefusal) => new AuthorizationRefusal(refusal, params.redirect_uri, params.state);
  if (params.response_type !== 'code')
    throw back(refuse.unsupportedResponseType('response_type must be code (the authorization code flow)'));
  const pkce = codeChallengeProblem(params.code_challenge, params.code_challenge_method);
  if (pkce) throw back(refuse.invalidRequest(pkce));
  if (!params.resource)
    throw back(refuse.invalidRequest('resource is required (RFC 8707): the URL of the MCP server or of the API'));
  const resource = resourceAudience(params.resource, protectedResourcesOf(deps.config.baseUrl));
  if (!resource) throw back(refuse.invalidTarget(`resource ${params.resource} is not served here`));
  const asked = parseScopes(params.scope ?? client.scope);
  if (asked.unknown.length) throw back(refuse.invalidScope(`Unknown scope: ${asked.unknown.join(' ')}`));
  return {
    client,
    redirectUri: params.redirect_uri,
    state: params.state,
    codeChallenge: params.code_challenge!,
    resource,
    requestedScopes: asked.known.length ? asked.known : [...SCOPES],
    params,
  };
}

/** RFC 9207: every authorization response names the issuer, so a client can tell authorization servers apart. */
export function issuerOf(deps: Deps): string {
  return deps.config.siteUrl;
}

export function denialRedirect(deps: Deps, checked: CheckedAuthorization): string {
  return redirectWith(checked.redirectUri, {
    error: 'access_denied',
    error_description: 'The owner denied the request',
    state: checked.state,
    iss: issuerOf(deps),
  });
}

/**
 * A live agent credential needs an account that has been through onboarding; in this
 * deployment that is an account holding an active live member key (signup issues none).
 */
export async function memberIsLiveCapable(db: Db, memberId: string): Promise<boolean> {
  const rows = await sqlRows<{ '?column?': number }>(
    db,
    `SELECT 1 FROM member_api_keys WHERE member_id = $1 AND environment = 'prod' AND status = 'active'
        AND (expires_at IS NULL OR expires_at > now()) LIMIT 1`,
    [memberId],
  );
  return rows.length > 0;
}

export interface ConsentDecision {
  agentId: string;
  scopes: Scope[];
  environment: 'live' | 'test';
  forceApproval: boolean;
  maxDailyPieces: number | null;
}

/** Why a consent cannot be recorded, in words for the owner (the page shows it and changes nothing). */
export class ConsentProblem extends Error {}

/** What the owner chose besides the agent may be granted (checked before a new agent is created for it). */
export async function assertConsentAllowed(
  deps: Deps,
  memberId: string,
  checked: CheckedAuthorization,
  decision: Pick<ConsentDecision, 'scopes' | 'environment'>,
): Promise<void> {
  if (!decision.scopes.length) throw new ConsentProblem('Choose at least one scope.');
  const extra = decision.scopes.filter((s) => !checked.requestedScopes.includes(s));
  if (extra.length) throw new ConsentProblem(`The client did not ask for ${extra.join(', ')}.`);
  if (decision.environment === 'live' && !(await memberIsLiveCapable(deps.db, memberId))) {
    throw new ConsentProblem('This account cannot issue live credentials yet: choose the test environment.');
  }
}

/** The owner approved: an authorization code for what they chose, and the redirect that carries it. */
export async function approveAuthorization(
  deps: Deps,
  memberId: string,
  checked: CheckedAuthorization,
  decision: ConsentDecision,
): Promise<string> {
  await assertConsentAllowed(deps, memberId, checked, decision);
  const agents = await sqlRows<{ '?column?': number }>(
    deps.db,
    `SELECT 1 FROM agents WHERE id = $1 AND member_id = $2 AND deleted_at IS NULL`,
    [decision.agentId, memberId],
  );
  if (!agents.length) throw new ConsentProblem('Choose one of your agents, or create one.');
  const code = randomBytes(32).toString('base64url');
  await sqlRun(
    deps.db,
    `INSERT INTO oauth_authorization_codes (code_hash, client_id, member_id, agent_id, redirect_uri, code_challenge, resource,
                                            scopes, environment, force_approval, max_daily_pieces, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, now() + make_interval(secs => $12))`,
    [
      hashKey(code),
      checked.client.id,
      memberId,
      decision.agentId,
      checked.redirectUri,
      checked.codeChallenge,
      checked.resource,
      decision.scopes,
      decision.environment,
      decision.forceApproval,
      decision.maxDailyPieces,
      AUTHORIZATION_CODE_SECONDS,
    ],
  );
  // Codes nobody redeemed are of no use a day later.
  await sqlRun(
    deps.db,
    `DELETE FROM oauth_authorization_codes WHERE member_id = $1 AND expires_at < now() - interval '1 day'`,
    [memberId],
  );
  return redirectWith(checked.redirectUri, { code, state: checked.state, iss: issuerOf(deps) });
}

// ---------------------------------------------------------------- tokens

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

async function issueTokens(tx: Db, grantId: string, audience: string, scopes: string[]): Promise<TokenAnswer> {
  const access = generateSecret(ACCESS_TOKEN_PREFIX, 40);
  const refresh = generateSecret(REFRESH_TOKEN_PREFIX, 48);
  await sqlRun(
    tx,
    `INSERT INTO oauth_access_tokens (token_hash, grant_id, audience, scopes, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))`,
    [hashKey(access), grantId, audience, scopes, ACCESS_TOKEN_SECONDS],
  );
  await sqlRun(
    tx,
    `INSERT INTO oauth_refresh_tokens (token_hash, grant_id, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`,
    [hashKey(refresh), grantId, REFRESH_TOKEN_SECONDS],
  );
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_SECONDS,
    refresh_token: refresh,
    scope: scopes.join(' '),
  };
}

/** Ends a grant: its credential is revoked, so every token of it is refused from now on. */
export async function endGrant(db: Db, grantId: string, reason: string): Promise<void> {
  const grant = await markGrantEnded(db, grantId, reason);
  if (!grant) return;
  await revokeGrantCredential(db, grant.credential_id);
}

/** Suspending a member ends every grant of the account (a reinstated member's hosts ask for consent again). */
export async function endMemberGrants(db: Db, memberId: string, reason: string): Promise<number> {
  const grants = await sqlRows<{ id: string }>(
    db,
    `SELECT id FROM oauth_grants WHERE member_id = $1 AND revoked_at IS NULL`,
    [memberId],
  );
  for (const g of grants) await endGrant(db, g.id, reason);
  return grants.length;
}

export interface TokenRequest {
  grant_type?: string;
  code?: string;
  redirect_uri?: string;
  code_verifier?: string;
  client_id?: string;
  refresh_token?: string;
  resource?: string;
  scope?: string;
}

interface CodeRow {
  id: string;
  client_id: string;
  member_id: string;
  agent_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  scopes: string[];
  environment: 'live' | 'test';
  force_approval: boolean;
  max_daily_pieces: number | null;
  expires_at: Date;
  used_at: Date | null;
  grant_id: string | null;
}

/** A token request's `resource`, when sent, must name the audience the grant is bound to (RFC 8707: invalid_target). */
function checkResource(deps: Deps, sent: string | undefined, bound: string): void {
  if (sent === undefined) return;
  const audience = resourceAudience(sent, protectedResourcesOf(deps.config.baseUrl));
  if (audience !== bound) throw refuse.invalidTarget(`resource ${sent} is not the one this grant was given for`);
}

/**
 * The token endpoint. Nothing is issued and nothing changes on a refusal, except where
 * OAuth asks for it: a code or refresh token presented a second time ends its grant.
 */
export async function exchangeToken(deps: Deps, req: TokenRequest, ip: string): Promise<TokenAnswer> {
  if (!req.grant_type) throw refuse.invalidRequest('grant_type is required');
  if (req.grant_type !== 'authorization_code' && req.grant_type !== 'refresh_token')
    throw refuse.unsupportedGrantType(`grant_type ${req.grant_type} is not supported`);
  const client = await resolveClient(deps, req.client_id, ip);
  return req.grant_type === 'authorization_code' ? redeemCode(deps, client, req) : refresh(deps, client, req);
}

async function redeemCode(deps: Deps, client: OAuthClient, req: TokenRequest): Promise<TokenAnswer> {
  if (!req.code) throw refuse.invalidRequest('code is required');
  if (!req.redirect_uri) throw refuse.invalidRequest('redirect_uri is required');
  if (!req.code_verifier) throw refuse.invalidRequest('code_verifier is required (PKCE)');
  let reused: string | null = null;
  const answer = await deps.db.transaction(async (tx) => {
    const [code] = await sqlRows<CodeRow>(
      tx,
      `SELECT id, client_id, member_id, agent_id, redirect_uri, code_challenge, resource, scopes, environment, force_approval,
              max_daily_pieces, expires_at, used_at, grant_id
         FROM oauth_authorization_codes WHERE code_hash = $1 FOR UPDATE`,
      [hashKey(req.code!)],
    );
    if (!code) throw refuse.invalidGrant('The authorization code is not valid');
    if (code.used_at) {
      // OAuth 2.1 4.1.3: a code used twice was stolen or replayed; what it issued is revoked.
      if (code.grant_id) {
        await endGrant(tx, code.grant_id, 'authorization_code_reused');
        reused = code.grant_id;
      }
      return null;
    }
    if (code.expires_at.getTime() <= Date.now()) throw refuse.invalidGrant('The authorization code has expired');
    if (code.client_id !== client.id) throw refuse.invalidGrant('The authorization code was issued to another client');
    if (code.redirect_uri !== req.redirect_uri)
      throw refuse.invalidGrant('redirect_uri is not the one of the authorization request');
    if (!codeVerifierMatches(req.code_verifier, code.code_challenge))
      throw refuse.invalidGrant('code_verifier does not match the code_challenge');
    checkResource(deps, req.resource, code.resource);
    const [live] = await sqlRows<{ '?column?': number }>(
      tx,
      `SELECT 1 FROM agents a JOIN members m ON m.id = a.member_id
        WHERE a.id = $1 AND a.member_id = $2 AND a.deleted_at IS NULL AND m.status = 'active'`,
      [code.agent_id, code.member_id],
    );
    if (!live) throw refuse.invalidGrant('The agent or the account of this authorization is no longer active');
    // The credential's key is never shown: only the grant's access tokens act as it.
    const credential = await insertOAuthGrantCredential(tx, {
      agentId: code.agent_id,
      memberId: code.member_id,
      keyHash: hashKey(generateSecret('oauth_grant_', 48)),
      keyPrefix: ACCESS_TOKEN_PREFIX,
      scopes: code.scopes,
      environment: code.environment,
      forceApproval: code.force_approval,
      maxDailyPieces: code.max_daily_pieces,
    });
    const grant = await insertGrant(tx, {
      memberId: code.member_id,
      agentId: code.agent_id,
      clientId: client.id,
      credentialId: credential.id,
      resource: code.resource,
    });
    await sqlRun(tx, `UPDATE oauth_authorization_codes SET used_at = now(), grant_id = $2 WHERE id = $1`, [
      code.id,
      grant.id,
    ]);
    return issueTokens(tx, grant.id, code.resource, code.scopes);
  });
  if (!answer) {
    deps.log.warn({ grant_id: reused }, 'oauth authorization code reused: grant ended');
    throw refuse.invalidGrant('The authorization code has already been used');
  }
  return answer;
}

interface RefreshRow {
  id: string;
  grant_id: string;
  expires_at: Date;
  used_at: Date | null;
  client_id: string;
  resource: string;
  grant_revoked_at: Date | null;
  credential_status: string;
  credential_expires_at: Date | null;
  scopes: string[];
  member_status: string;
}

async function refresh(deps: Deps, client: OAuthClient, req: TokenRequest): Promise<TokenAnswer> {
  if (!req.refresh_token) throw refuse.invalidRequest('refresh_token is required');
  let reused = false;
  const answer = await deps.db.transaction(async (tx) => {
    const [row] = await sqlRows<RefreshRow>(
      tx,
      `SELECT r.id, r.grant_id, r.expires_at, r.used_at, g.client_id, g.resource, g.revoked_at AS grant_revoked_at,
              c.status AS credential_status, c.expires_at AS credential_expires_at, c.scopes, m.status AS member_status
         FROM oauth_refresh_tokens r
         JOIN oauth_grants g ON g.id = r.grant_id
         JOIN agent_credentials c ON c.id = g.credential_id
         JOIN members m ON m.id = g.member_id
        WHERE r.token_hash = $1
        FOR UPDATE OF r, g`,
      [hashKey(req.refresh_token!)],
    );
    if (!row) throw refuse.invalidGrant('The refresh token is not valid');
    if (row.client_id !== client.id) throw refuse.invalidGrant('The refresh token was issued to another client');
    if (row.used_at) {
      // A rotated refresh token presented again: one of the two holders is not the client.
      await endGrant(tx, row.grant_id, 'refresh_token_reused');
      reused = true;
      return null;
    }
    if (row.grant_revoked_at || row.credential_status !== 'active' || row.member_status !== 'active')
      throw refuse.invalidGrant('The grant of this refresh token has ended');
    if (row.expires_at.getTime() <= Date.now()) throw refuse.invalidGrant('The refresh token has expired');
    checkResource(deps, req.resource, row.resource);
    let scopes = row.scopes;
    if (req.scope !== undefined) {
      const asked = parseScopes(req.scope);
      const beyond = [...asked.unknown, ...asked.known.filter((s) => !row.scopes.includes(s))];
      if (beyond.length) throw refuse.invalidScope(`Not granted: ${beyond.join(' ')}`);
      if (asked.known.length) scopes = asked.known;
    }
    await sqlRun(tx, `UPDATE oauth_refresh_tokens SET used_at = now() WHERE id = $1`, [row.id]);
    // Expired tokens of the grant are of no use to anyone (rotated refresh tokens stay until they expire, for reuse detection).
    await sqlRun(tx, `DELETE FROM oauth_access_tokens WHERE grant_id = $1 AND expires_at < now()`, [row.grant_id]);
    await sqlRun(tx, `DELETE FROM oauth_refresh_tokens WHERE grant_id = $1 AND expires_at < now()`, [row.grant_id]);
    return issueTokens(tx, row.grant_id, row.resource, scopes);
  });
  if (!answer) {
    if (reused) deps.log.warn({ client_id: client.clientId }, 'oauth refresh token reused: grant ended');
    throw refuse.invalidGrant('The refresh token has already been used; the grant has been ended');
  }
  return answer;
}

export interface RevocationRequest {
  token?: string;
  token_type_hint?: string;
  client_id?: string;
}

/**
 * RFC 7009. Revoking either token of a grant ends the grant (a host that disconnects is
 * done with it). An unknown or already invalid token is answered as revoked.
 */
export async function revokeToken(deps: Deps, req: RevocationRequest, ip: string): Promise<void> {
  if (!req.token) throw refuse.invalidRequest('token is required');
  if (req.token_type_hint && !['access_token', 'refresh_token'].includes(req.token_type_hint))
    throw refuse.unsupportedTokenType(`token_type_hint ${req.token_type_hint} is not supported`);
  const client = await resolveClient(deps, req.client_id, ip);
  const hash = hashKey(req.token);
  const [found] = await sqlRows<{ grant_id: string; client_id: string }>(
    deps.db,
    `SELECT t.grant_id, g.client_id FROM oauth_access_tokens t JOIN oauth_grants g ON g.id = t.grant_id WHERE t.token_hash = $1
     UNION ALL
     SELECT r.grant_id, g.client_id FROM oauth_refresh_tokens r JOIN oauth_grants g ON g.id = r.grant_id WHERE r.token_hash = $1
     LIMIT 1`,
    [hash],
  );
  if (!found) return;
  if (found.client_id !== client.id) throw refuse.invalidGrant('The token was issued to another client');
  await endGrant(deps.db, found.grant_id, 'revoked_by_client');
}

// ---------------------------------------------------------------- the owner's view

export interface GrantView {
  id: string;
  client_name: string;
  client_id: string;
  registration: 'dynamic' | 'metadata_document';
  credential_id: string;
  scopes: string[];
  environment: 'live' | 'test';
  force_approval: boolean;
  max_daily_pieces: number | null;
  resource: string;
  status: 'active' | 'ended';
  /** Why it ended: revoked_by_owner, revoked_by_client, credential_revoked, member_suspended, ... */
  ended_reason: string | null;
  created_at: string;
  last_used_at: string | null;
}

/** The grants of one of the member's agents, newest first. */
export async function listAgentGrants(deps: Deps, memberId: string, agentId: string): Promise<GrantView[]> {
  const rows = await sqlRows<{
    id: string;
    client_name: string;
    client_id: string;
    registration: GrantView['registration'];
    credential_id: string;
    scopes: string[];
    environment: GrantView['environment'];
    force_approval: boolean;
    max_daily_pieces: number | null;
    resource: string;
    revoked_at: Date | null;
    revoked_reason: string | null;
    credential_status: string;
    created_at: Date;
    last_used_at: Date | null;
  }>(
    deps.db,
    `SELECT g.id, cl.client_name, cl.client_id, cl.registration, g.credential_id, c.scopes, c.environment, c.force_approval,
            c.max_daily_pieces, g.resource, g.revoked_at, g.revoked_reason, c.status AS credential_status, g.created_at,
            g.last_used_at
       FROM oauth_grants g JOIN oauth_clients cl ON cl.id = g.client_id JOIN agent_credentials c ON c.id = g.credential_id
      WHERE g.member_id = $1 AND g.agent_id = $2
      ORDER BY g.created_at DESC, g.id LIMIT 100`,
    [memberId, agentId],
  );
  return rows.map((r: Record<string, unknown>) => {
    const ended = r.revoked_at !== null || r.credential_status !== 'active';
    return {
      id: r.id as string,
      client_name: r.client_name as string,
      client_id: r.client_id as string,
      registration: r.registration as GrantView['registration'],
      credential_id: r.credential_id as string,
      scopes: r.scopes as string[],
      environment: r.environment as GrantView['environment'],
      force_approval: r.force_approval as boolean,
      max_daily_pieces: r.max_daily_pieces as number | null,
      resource: r.resource as string,
      status: ended ? 'ended' : 'active',
      ended_reason: ended ? ((r.revoked_reason as string | null) ?? 'credential_revoked') : null,
      created_at: (r.created_at as Date).toISOString(),
      last_used_at: r.last_used_at ? (r.last_used_at as Date).toISOString() : null,
    };
  });
}

/** The owner revokes a grant of one of their agents; false when there is no such grant. */
export async function revokeGrantAsOwner(
  deps: Deps,
  memberId: string,
  agentId: string,
  grantId: string,
): Promise<boolean> {
  const [grant] = await sqlRows<{ id: string }>(
    deps.db,
    `SELECT id FROM oauth_grants WHERE id::text = $1 AND member_id = $2 AND agent_id = $3`,
    [grantId, memberId, agentId],
  );
  if (!grant) return false;
  await endGrant(deps.db, grant.id, 'revoked_by_owner');
  return true;
}
