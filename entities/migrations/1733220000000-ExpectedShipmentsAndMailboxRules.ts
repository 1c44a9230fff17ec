import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Agent-specific arrangements for physical inbound: expected shipments (a piece an agent
 * announces, linked to the package whose normalised tracking number matches when the
 * facility commits it) and mailbox rules (literal sender, carrier and kind matches that
 * request an action or add tags when a piece arrives). Live only, like packages.
 */
export class ExpectedShipmentsAndMailboxRules1733220000000 implements MigrationInterface {
  name = 'ExpectedShipmentsAndMailboxRules1733220000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE expected_shipments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid NOT NULL REFERENCES agents(id),
        mailbox_id text NOT NULL,
        status text NOT NULL DEFAULT 'expected' CHECK (status IN ('expected','received','cancelled')),
        carrier text,
        tracking_number text NOT NULL,
        tracking_number_normalized text NOT NULL CHECK (tracking_number_normalized <> ''),
        sender_name text,
        description text,
        kind text CHECK (kind IN ('letter','parcel')),
        expected_date date,
        notes text,
        on_arrival jsonb,
        created_by text NOT NULL CHECK (created_by IN ('agent','member')),
        version integer NOT NULL DEFAULT 1,
        package_id uuid UNIQUE REFERENCES physical_inbound_items(id) ON DELETE SET NULL,
        arrival_action_id uuid REFERENCES package_actions(id) ON DELETE SET NULL,
        received_at timestamptz,
        cancelled_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // One open shipment per tracking number and account: an arriving package satisfies one.
    await q.query(
      `CREATE UNIQUE INDEX expected_shipments_open_tracking ON expected_shipments (member_id, tracking_number_normalized) WHERE status = 'expected'`,
    );
    await q.query(`CREATE INDEX expected_shipments_agent ON expected_shipments (member_id, agent_id, created_at DESC)`);

    await q.query(`
      CREATE TABLE mailbox_rules (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        member_id uuid NOT NULL REFERENCES members(id),
        agent_id uuid NOT NULL REFERENCES agents(id),
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        enabled boolean NOT NULL DEFAULT true,
        match jsonb NOT NULL,
        apply jsonb NOT NULL,
        created_by text NOT NULL CHECK (created_by IN ('agent','member')),
        match_count integer NOT NULL DEFAULT 0,
        last_matched_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX mailbox_rules_agent ON mailbox_rules (member_id, agent_id, created_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE IF EXISTS mailbox_rules`);
    await q.query(`DROP TABLE IF EXISTS expected_shipments`);
  }
}
