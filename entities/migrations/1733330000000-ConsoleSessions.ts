import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The owner console's sign-in: a session row per signed-in browser (the cookie holds a
 * random token, stored here only as its SHA-256; revocable and expiring, with the secret
 * its forms' CSRF tokens are made from), and one-time sign-in links the operator CLI
 * prints for an owner without a key at hand (hashed, short-lived, used at most once).
 */
export class ConsoleSessions1733330000000 implements MigrationInterface {
  name = 'ConsoleSessions1733330000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE console_sessions (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id) ON DELETE CASCADE,
        token_hash text NOT NULL UNIQUE,
        csrf_secret text NOT NULL,
        signed_in_with text NOT NULL CHECK (signed_in_with IN ('member_key','sign_in_link')),
        member_key_id uuid REFERENCES member_api_keys(id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX console_sessions_member ON console_sessions (member_id, created_at DESC)`);
    await q.query(`
      CREATE TABLE console_sign_in_links (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id) ON DELETE CASCADE,
        token_hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE console_sign_in_links`);
    await q.query(`DROP TABLE console_sessions`);
  }
}
