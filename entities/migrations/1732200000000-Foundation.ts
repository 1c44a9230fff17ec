import { MigrationInterface, QueryRunner } from 'typeorm';

/** Members, agents, keys, facilities, waitlist, instructions, credits ledger, idempotency, rate limits. */
export class Foundation1732200000000 implements MigrationInterface {
  name = 'Foundation1732200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE members (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email text NOT NULL,
        full_name text NOT NULL,
        password_hash text,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','suspended')),
        email_verified boolean NOT NULL DEFAULT false,
        business boolean NOT NULL DEFAULT false,
        agent_auto_fill boolean NOT NULL DEFAULT false,
        packages_enabled boolean NOT NULL DEFAULT false,
        return_name text, return_company text, return_line1 text, return_line2 text,
        return_city text, return_state text, return_zip text,
        per_transaction_limit_cents integer,
        daily_spend_limit_cents integer,
        pricing_overrides jsonb,
        rate_limit_per_minute integer,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX members_email_lower ON members (lower(email))`);

    await q.query(`
      CREATE TABLE agents (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        name text NOT NULL,
        display_name text,
        description text,
        webhook_url text,
        webhook_enabled boolean NOT NULL DEFAULT true,
        webhook_event_types text[] NOT NULL DEFAULT '{*}',
        webhook_auth_type text NOT NULL DEFAULT 'hmac' CHECK (webhook_auth_type IN ('hmac','bearer','header')),
        webhook_auth_token_enc text,
        webhook_auth_header_name text,
        webhook_payload_format text NOT NULL DEFAULT 'standard' CHECK (webhook_payload_format IN ('standard','wrapped')),
        webhook_signing_key_id text,
        webhook_signing_secret_enc text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX agents_member_name ON agents (member_id, lower(name))`);

    await q.query(`
      CREATE TABLE agent_credentials (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        agent_id uuid NOT NULL REFERENCES agents(id),
        member_id uuid NOT NULL REFERENCES members(id),
        key_hash text NOT NULL UNIQUE,
        key_prefix text NOT NULL,
        scopes text[] NOT NULL,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','revoked')),
        environment text NOT NULL CHECK (environment IN ('live','test')),
        expires_at timestamptz,
        force_approval boolean NOT NULL DEFAULT false,
        max_daily_pieces integer CHECK (max_daily_pieces IS NULL OR max_daily_pieces >= 1),
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX agent_credentials_agent ON agent_credentials (agent_id)`);

    await q.query(`
      CREATE TABLE member_api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        name text NOT NULL,
        key_hash text NOT NULL UNIQUE,
        key_prefix text NOT NULL,
        environment text NOT NULL DEFAULT 'prod' CHECK (environment IN ('prod','test')),
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','revoked','rotated')),
        expires_at timestamptz,
        rotated_to_id uuid,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX member_api_keys_member ON member_api_keys (member_id)`);

    await q.query(`
      CREATE TABLE facilities (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','inactive')),
        origin_zip text NOT NULL DEFAULT '78701',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE facility_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        facility_id uuid NOT NULL REFERENCES facilities(id),
        key_hash text NOT NULL UNIQUE,
        key_prefix text NOT NULL,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active','revoked')),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE waitlist_leads (
        id text PRIMARY KEY CHECK (id ~ '^wl_[a-f0-9]{16}$'),
        email text NOT NULL,
        needs text,
        preferred_location text,
        callback_url text,
        agent_id text,
        operator_contact text,
        source text NOT NULL DEFAULT 'api',
        stage text NOT NULL DEFAULT 'waitlisted',
        member_id uuid REFERENCES members(id),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);

    await q.query(`
      CREATE TABLE instructions_versions (
        agent_id uuid NOT NULL REFERENCES agents(id),
        version integer NOT NULL CHECK (version >= 1),
        text text NOT NULL,
        hash text NOT NULL,
        source text NOT NULL DEFAULT 'renter',
        reason text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (agent_id, version)
      )`);

    await q.query(`
      CREATE TABLE credits_ledger (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        amount_cents integer NOT NULL,
        kind text NOT NULL CHECK (kind IN ('top_up','debit','refund','adjustment')),
        entry_key text NOT NULL UNIQUE,
        reference_type text,
        reference_id text,
        description text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX credits_ledger_member ON credits_ledger (member_id, created_at)`);
    await q.query(`CREATE INDEX credits_ledger_reference ON credits_ledger (reference_type, reference_id)`);

    await q.query(`
      CREATE TABLE idempotency_records (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        owner_key text NOT NULL,
        idempotency_key text NOT NULL,
        operation text NOT NULL,
        request_hash text NOT NULL,
        state text NOT NULL DEFAULT 'in_progress' CHECK (state IN ('in_progress','completed')),
        response_status integer,
        response_body jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        UNIQUE (owner_key, operation, idempotency_key)
      )`);

    await q.query(`
      CREATE UNLOGGED TABLE rate_limit_counters (
        bucket text NOT NULL,
        window_start timestamptz NOT NULL,
        count integer NOT NULL,
        PRIMARY KEY (bucket, window_start)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'rate_limit_counters',
      'idempotency_records',
      'credits_ledger',
      'instructions_versions',
      'waitlist_leads',
      'facility_keys',
      'facilities',
      'member_api_keys',
      'agent_credentials',
      'agents',
      'members',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
