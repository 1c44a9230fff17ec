import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * MCP hosts connecting by OAuth with the owner's consent: the clients (registered
 * dynamically, or known by the URL of their client ID metadata document, cached), the
 * authorization codes of the owner's consent (hashed, short-lived, single use, with the
 * PKCE challenge, redirect URI, resource and everything the owner chose), the grants (each
 * owns one agent credential, which carries the scopes, environment and safeguards), and the
 * grants' access and refresh tokens (hashed; a rotated refresh token is kept so that its
 * reuse can be recognised and the grant ended).
 */
export class OAuthGrants1733900000000 implements MigrationInterface {
  name = 'OAuthGrants1733900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE oauth_clients (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        client_id text NOT NULL UNIQUE,
        registration text NOT NULL CHECK (registration IN ('dynamic','metadata_document')),
        client_name text NOT NULL,
        client_uri text,
        redirect_uris text[] NOT NULL,
        metadata jsonb NOT NULL,
        registered_from_ip text,
        fetched_at timestamptz,
        fresh_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE oauth_grants (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid NOT NULL REFERENCES agents(id),
        client_id uuid NOT NULL REFERENCES oauth_clients(id),
        credential_id uuid NOT NULL UNIQUE REFERENCES agent_credentials(id),
        resource text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz,
        revoked_reason text
      )`);
    await q.query(`CREATE INDEX oauth_grants_agent ON oauth_grants (agent_id, created_at)`);
    await q.query(`CREATE INDEX oauth_grants_member ON oauth_grants (member_id) WHERE revoked_at IS NULL`);
    await q.query(`
      CREATE TABLE oauth_authorization_codes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        code_hash text NOT NULL UNIQUE,
        client_id uuid NOT NULL REFERENCES oauth_clients(id),
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid NOT NULL REFERENCES agents(id),
        redirect_uri text NOT NULL,
        code_challenge text NOT NULL,
        resource text NOT NULL,
        scopes text[] NOT NULL,
        environment text NOT NULL CHECK (environment IN ('live','test')),
        force_approval boolean NOT NULL,
        max_daily_pieces integer CHECK (max_daily_pieces IS NULL OR max_daily_pieces >= 1),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        grant_id uuid REFERENCES oauth_grants(id),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX oauth_authorization_codes_expiry ON oauth_authorization_codes (expires_at)`);
    await q.query(`
      CREATE TABLE oauth_access_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        token_hash text NOT NULL UNIQUE,
        grant_id uuid NOT NULL REFERENCES oauth_grants(id),
        audience text NOT NULL,
        scopes text[] NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX oauth_access_tokens_grant ON oauth_access_tokens (grant_id, expires_at)`);
    await q.query(`
      CREATE TABLE oauth_refresh_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        token_hash text NOT NULL UNIQUE,
        grant_id uuid NOT NULL REFERENCES oauth_grants(id),
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id, expires_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE oauth_refresh_tokens`);
    await q.query(`DROP TABLE oauth_access_tokens`);
    await q.query(`DROP TABLE oauth_authorization_codes`);
    await q.query(`DROP TABLE oauth_grants`);
    await q.query(`DROP TABLE oauth_clients`);
  }
}
