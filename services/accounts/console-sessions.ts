// The owner console's sign-in: a member pastes a live member key once (or follows a
// one-time link the operator CLI printed) and gets a session. The browser holds a random
// token; Postgres holds its SHA-256, the member, the expiry, the revocation and the
// secret its forms' CSRF tokens are made from. A session answers as the member's own
// live member key would, so every console page goes through the same services and
// access rules as REST.
import { randomBytes } from 'node:crypto';
import Tokens from 'csrf';
import type { Deps } from '../shared/deps';
import { authenticate, AuthContext } from './auth';
import { SCOPES } from '../../domain/shared/access';
import { ApiError, errors } from '../../domain/shared/errors';
import { hashKey } from '../../domain/accounts/keys';
import { sqlRows, sqlRun } from '../shared/sql';

/** A session lasts 12 hours from sign-in; signing in again starts a new one. */
export const CONSOLE_SESSION_HOURS = 12;
/** A sign-in link is good for 15 minutes and one use. */
export const SIGN_IN_LINK_MINUTES = 15;

const csrfTokens = new Tokens();
const ALL_SCOPES: ReadonlySet<string> = new Set(SCOPES);

export interface ConsoleSession {
  id: string;
  memberId: string;
  memberEmail: string;
  memberName: string;
  csrfSecret: string;
  expiresAt: Date;
  /** The member's live member-key view: what REST would see with an sk_live_ key. */
  auth: AuthContext;
}

const newToken = () => randomBytes(32).toString('base64url');

async function startSession(
  deps: Deps,
  memberId: string,
  via: { memberKeyId: string } | 'sign_in_link',
): Promise<{ token: string; expiresAt: Date }> {
  const token = newToken();
  const expiresAt = new Date(Date.now() + CONSOLE_SESSION_HOURS * 3600_000);
  await sqlRun(
    deps.db,
    `INSERT INTO console_sessions (member_id, token_hash, csrf_secret, signed_in_with, member_key_id, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [
      memberId,
      hashKey(token),
      csrfTokens.secretSync(),
      via === 'sign_in_link' ? 'sign_in_link' : 'member_key',
      via === 'sign_in_link' ? null : via.memberKeyId,
      expiresAt,
    ],
  );
  return { token, expiresAt };
}

/** Why a key that authenticates still cannot sign in, in words for the sign-in page. */
function notAMemberKey(kind: string): ApiError {
  const words: Record<string, string> = {
    member_test:
      'This is a test key (sk_test_). The console shows live records: sign in with your live member key (sk_live_).',
    agent: 'This is an agent key (sk_agent_). Agents cannot sign in to the console: use your member key (sk_live_).',
    agent_test:
      'This is an agent test key (sk_agent_test_). Agents cannot sign in to the console: use your member key (sk_live_).',
    facility:
      'This is a facility key (sk_facility_). The console is for account owners: use your member key (sk_live_).',
  };
  return errors.forbidden('member_key_required', words[kind] ?? 'Sign in with your live member key (sk_live_).');
}

/** Checks a pasted key exactly as REST authenticates it; only a live member key starts a session. */
export async function signInWithMemberKey(deps: Deps, rawKey: string): Promise<{ token: string; expiresAt: Date }> {
  const auth = await authenticate(deps, `Bearer ${rawKey.trim()}`);
  if (auth.kind !== 'member') throw notAMemberKey(auth.kind);
  return startSession(deps, auth.memberId!, { memberKeyId: auth.keyId });
}

/** A one-time sign-in link for a member (operator CLI); only its hash is stored. */
export async function createSignInLink(deps: Deps, memberId: string): Promise<{ url: string; expires_at: string }> {
  const [member] = await sqlRows<{ id: string; status: string }>(
    deps.db,
    `SELECT id, status FROM members WHERE id::text = $1`,
    [memberId],
  );
  if (!member) throw new Error(`no member ${memberId}`);
  if (member.status !== 'active') throw new Error(`member ${memberId} is ${member.status}`);
  const token = newToken();
  const expiresAt = new Date(Date.now() + SIGN_IN_LINK_MINUTES * 60_000);
  await sqlRun(deps.db, `INSERT INTO console_sign_in_links (member_id, token_hash, expires_at) VALUES ($1, $2, $3)`, [
    member.id,
    hashKey(token),
    expiresAt,
  ]);
  return { url: `${deps.config.siteUrl}/console/sign-in/link?token=${token}`, expires_at: expiresAt.toISOString() };
}

/** Uses a sign-in link (once: the update that marks it used is the check) and starts a session. */
export async function redeemSignInLink(deps: Deps, rawToken: string): Promise<{ token: string; expiresAt: Date }> {
  // WITH ... SELECT: TypeORM answers a bare UPDATE ... RETURNING with [rows, count].
  const [link] = await sqlRows<{ member_id: string }>(
    deps.db,
    `WITH used AS (
       UPDATE console_sign_in_links l SET used_at = now()
         FROM members m
        WHERE l.token_hash = $1 AND l.used_at IS NULL AND l.expires_at > now() AND m.id = l.member_id AND m.status = 'active'
        RETURNING l.member_id)
     SELECT member_id FROM used`,
    [hashKey(rawToken)],
  );
  if (!link) {
    throw errors.unauthorized(
      'sign_in_link_invalid',
      'This sign-in link is not valid: it was used already, it expired, or it was mistyped. Ask for a new one, or sign in with your member key.',
    );
  }
  return startSession(deps, link.member_id, 'sign_in_link');
}

/**
 * The live session a cookie token belongs to, or null: unknown, revoked, expired, the
 * member suspended, or the member key it was started with no longer active.
 */
export async function findConsoleSession(deps: Deps, rawToken: string | undefined): Promise<ConsoleSession | null> {
  if (!rawToken || rawToken.length > 200) return null;
  const [row] = await sqlRows<{
    id: string;
    member_id: string;
    csrf_secret: string;
    expires_at: Date;
    last_seen_at: Date;
    email: string;
    full_name: string;
    rate_limit_per_minute: number | null;
  }>(
    deps.db,
    `SELECT s.id, s.member_id, s.csrf_secret, s.expires_at, s.last_seen_at, m.email, m.full_name, m.rate_limit_per_minute
       FROM console_sessions s
       JOIN members m ON m.id = s.member_id AND m.status = 'active'
       LEFT JOIN member_api_keys k ON k.id = s.member_key_id
      WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
        AND (s.member_key_id IS NULL OR (k.status = 'active' AND (k.expires_at IS NULL OR k.expires_at > now())))`,
    [hashKey(rawToken)],
  );
  if (!row) return null;
  // last_seen_at is for the owner's list of sessions; a minute's precision is enough.
  if (Date.now() - new Date(row.last_seen_at).getTime() > 60_000) {
    await sqlRun(deps.db, `UPDATE console_sessions SET last_seen_at = now() WHERE id = $1`, [row.id]);
  }
  return {
    id: row.id,
    memberId: row.member_id,
    memberEmail: row.email,
    memberName: row.full_name,
    csrfSecret: row.csrf_secret,
    expiresAt: new Date(row.expires_at),
    auth: {
      kind: 'member',
      keyId: row.id,
      ownerKey: `console:${row.member_id}`,
      memberId: row.member_id,
      agentId: null,
      facilityId: null,
      testMode: false,
      scopes: ALL_SCOPES,
      forceApproval: false,
      maxDailyPieces: null,
      rateLimitPerMinute: row.rate_limit_per_minute,
    },
  };
}

/** Signs a session out; a member may end any of their own sessions (404 for any other). */
export async function revokeConsoleSession(deps: Deps, memberId: string, sessionId: string): Promise<void> {
  const rows = await sqlRows<{ id: string }>(
    deps.db,
    `WITH ended AS (UPDATE console_sessions SET revoked_at = COALESCE(revoked_at, now()) WHERE id::text = $1 AND member_id = $2 RETURNING id)
     SELECT id FROM ended`,
    [sessionId, memberId],
  );
  if (!rows.length) throw errors.notFound('Session');
}

export interface ConsoleSessionView {
  id: string;
  signed_in_with: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
}

/** The member's sessions that are still open, newest first. */
export async function listConsoleSessions(deps: Deps, memberId: string): Promise<ConsoleSessionView[]> {
  const rows = await sqlRows<{
    id: string;
    signed_in_with: string;
    created_at: Date;
    last_seen_at: Date;
    expires_at: Date;
  }>(
    deps.db,
    `SELECT id, signed_in_with, created_at, last_seen_at, expires_at FROM console_sessions
      WHERE member_id = $1 AND revoked_at IS NULL AND expires_at > now() ORDER BY created_at DESC LIMIT 50`,
    [memberId],
  );
  return rows.map((r: Record<string, unknown>) => ({
    id: r.id as string,
    signed_in_with: r.signed_in_with as string,
    created_at: (r.created_at as Date).toISOString(),
    last_seen_at: (r.last_seen_at as Date).toISOString(),
    expires_at: (r.expires_at as Date).toISOString(),
  }));
}

export function csrfToken(secret: string): string {
  return csrfTokens.create(secret);
}

export function csrfTokenValid(secret: string, token: unknown): boolean {
  return typeof token === 'string' && csrfTokens.verify(secret, token);
}

export function newCsrfSecret(): string {
  return csrfTokens.secretSync();
}
