import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook delivery: custom endpoints with their rules, one delivery per (event, receiver)
 * and the attempts of each delivery. Legacy agent webhooks keep their settings on the
 * agents table (Foundation migration); their deliveries live here too, told apart by
 * target_type.
 */
export class Webhooks1732500000000 implements MigrationInterface {
  name = 'Webhooks1732500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhook_endpoints (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid REFERENCES agents(id) ON DELETE CASCADE,
        name text NOT NULL,
        url text NOT NULL,
        environment text NOT NULL CHECK (environment IN ('live','sandbox')),
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','active','paused')),
        paused_reason text CHECK (paused_reason IN ('url_changed','consecutive_failures')),
        event_types text[] NOT NULL,
        secret_enc text NOT NULL,
        secret_prefix text NOT NULL,
        previous_secret_enc text,
        previous_secret_expires_at timestamptz,
        consecutive_failures integer NOT NULL DEFAULT 0,
        activated_at timestamptz,
        verified_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhook_endpoints_member ON webhook_endpoints (member_id, environment, status)`);

    await q.query(`
      CREATE TABLE webhook_endpoint_rules (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        name text NOT NULL,
        source text NOT NULL CHECK (source IN ('envelope','letter','any')),
        match text NOT NULL CHECK (match IN ('any','all')),
        terms text[] NOT NULL,
        exclude_terms text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX webhook_endpoint_rules_endpoint ON webhook_endpoint_rules (endpoint_id, created_at)`);

    await q.query(`
      CREATE TABLE webhook_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        event_id uuid NOT NULL REFERENCES events(id) ON DELETE CASCADE,
        target text NOT NULL,
        target_type text NOT NULL CHECK (target_type IN ('agent_webhook','endpoint')),
        endpoint_id uuid REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid,
        event_type text NOT NULL,
        environment text NOT NULL CHECK (environment IN ('live','test')),
        kind text NOT NULL DEFAULT 'event' CHECK (kind IN ('event','test','verification')),
        status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued','processing','delivered','failed')),
        series integer NOT NULL DEFAULT 0,
        max_attempts integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 5),
        attempts_count integer NOT NULL DEFAULT 0,
        last_status_code integer,
        last_error text,
        challenge text,
        target_url text,
        delivered_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (event_id, target)
      )`);
    await q.query(`CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC)`);
    await q.query(
      `CREATE INDEX webhook_deliveries_member ON webhook_deliveries (member_id, target_type, created_at DESC)`,
    );
    await q.query(`CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at)`);
    await q.query(
      `CREATE INDEX webhook_deliveries_stalled ON webhook_deliveries (status, updated_at) WHERE status IN ('queued','processing')`,
    );

    await q.query(`
      CREATE TABLE webhook_delivery_attempts (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        delivery_id uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
        series integer NOT NULL,
        attempt_number integer NOT NULL CHECK (attempt_number BETWEEN 1 AND 5),
        outcome text NOT NULL CHECK (outcome IN ('delivered','failed')),
        webhook_timestamp bigint,
        status_code integer,
        response_time_ms integer,
        error text,
        response_body text,
        attempted_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (delivery_id, series, attempt_number)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'webhook_delivery_attempts',
      'webhook_deliveries',
      'webhook_endpoint_rules',
      'webhook_endpoints',
    ]) {
      await q.query(`DROP TABLE IF EXISTS ${t}`);
    }
  }
}
