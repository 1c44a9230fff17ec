// Request fields that name another object (a piece's inbound_capture_id, an endpoint's
// agent_id, a reply's conversation_id, ...). Each must name an object that exists and
// that the caller may see: the caller's member, the key's environment, and for agent keys
// their own agent's objects. Otherwise the request is refused with 400 naming the field,
// before anything is stored, whether the id is unknown, another member's or another
// agent's (the answer does not tell which).
import type { AuthContext } from '../accounts/auth';
import { errors, FieldError } from '../../domain/shared/errors';
import { canSee, ownsAcrossEnvironments } from './scoping';
import { sqlRows, type Queryable } from './sql';

interface LinkTarget {
  /** What the field names, in the refusal. */
  noun: string;
  /** member_id, agent_id and test_mode of the object with id $1 of member $2, if any. */
  sql: string;
  /** Agents belong to no environment: test keys act for their agent too. */
  spansEnvironments?: boolean;
}

const LINK_TARGETS = {
  agent: {
    noun: 'agent',
    sql: `SELECT member_id, id AS agent_id, NULL::boolean AS test_mode FROM agents WHERE id = $1 AND member_id = $2 AND deleted_at IS NULL`,
    spansEnvironments: true,
  },
  package: {
    noun: 'package',
    sql: `SELECT member_id, agent_id, environment = 'test' AS test_mode FROM physical_inbound_items WHERE id = $1 AND member_id = $2`,
  },
  inbound_mail_item: {
    noun: 'inbound mail item',
    sql: `SELECT member_id, agent_id, test_mode FROM inbound_mail_items WHERE id = $1 AND member_id = $2`,
  },
  postal_thread: {
    noun: 'postal thread',
    sql: `SELECT member_id, agent_id, test_mode FROM postal_threads WHERE id = $1 AND member_id = $2`,
  },
  mail_run: {
    noun: 'mail run',
    // Business mail runs are live-only.
    sql: `SELECT member_id, agent_id, false AS test_mode FROM mail_runs WHERE mail_run_id = $1 AND member_id = $2`,
  },
  webhook_endpoint: {
    noun: 'webhook endpoint',
    sql: `SELECT member_id, agent_id, environment = 'sandbox' AS test_mode FROM webhook_endpoints WHERE id = $1 AND member_id = $2`,
  },
  support_conversation: {
    noun: 'support conversation',
    sql: `SELECT member_id, agent_id, environment = 'test' AS test_mode FROM support_conversations WHERE id = $1 AND member_id = $2`,
  },
  facility_conversation: {
    noun: 'facility conversation',
    sql: `SELECT member_id, agent_id, environment = 'test' AS test_mode FROM facility_conversations WHERE id = $1 AND member_id = $2`,
  },
} satisfies Record<string, LinkTarget>;

export type LinkKind = keyof typeof LINK_TARGETS;

/** Field path -> [what it names, the id sent]; absent ids (undefined or null) are not links. */
export type Links = Record<string, [LinkKind, string | null | undefined]>;

/** 400 listing every field whose id names nothing the caller may see. */
export async function assertLinkedObjects(db: Queryable, auth: AuthContext, links: Links): Promise<void> {
  const fields: FieldError[] = [];
  for (const [path, [kind, id]] of Object.entries(links)) {
    if (id === undefined || id === null) continue;
    const target: LinkTarget = LINK_TARGETS[kind];
    const [row] = auth.memberId
      ? await sqlRows<{ member_id: string; agent_id: string | null; test_mode: boolean | null }>(db, target.sql, [
          id,
          auth.memberId,
        ])
      : [];
    const owner = row && { memberId: row.member_id, agentId: row.agent_id };
    const visible =
      owner !== undefined &&
      (target.spansEnvironments
        ? ownsAcrossEnvironments(auth, owner)
        : canSee(auth, { ...owner, testMode: row.test_mode as boolean }));
    if (!visible) fields.push({ path, message: `no ${target.noun} with this id is visible to this key` });
  }
  if (fields.length) throw errors.validation(fields);
}
