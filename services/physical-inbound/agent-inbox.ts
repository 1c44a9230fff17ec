// Assigned inbound (the agent inbox, contract agent-inbox.v1): an agent reads the items
// explicitly assigned to it (live: committed by the facility; test: the member sample
// and seeded fixtures), their saved OCR and its duties as one versioned context, reports
// outcomes against that exact context, and sees its receipts and outcomes. Handling
// proposals live in services/physical-inbound/handling.ts.
import { pagination, paginationWithNext } from '../../domain/shared/pagination';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { ApiError, codedError, errors } from '../../domain/shared/errors';
import {
  AGENT_INBOX_CONTRACT_VERSION,
  AGENT_INBOX_SCHEMA_VERSION,
  CONTENT_TRUST,
  contextVersion,
  MAX_DUTIES_CHARS,
} from '../../domain/physical-inbound/agent-inbox';
import { SEARCH_MODE } from '../../domain/physical-inbound/search';
import { currentInstructions, instructionsHash, PLATFORM_FALLBACK_INSTRUCTIONS } from '../accounts/instructions';
import { startAfterCommit, startScanBundleWorkflow } from './inbound-workflows';
import { environmentOf, findItem, ITEM_COLUMNS, ItemColumns, ItemRow, recordActivity, toItemRow } from './item-records';
import {
  createFixtureItem,
  derivedUuid,
  ensureMemberSample,
  loadFixture,
  memberSampleId,
  uploadFixture,
} from './sandbox-fixtures';
import { loadItemBundles, ocrRecord, scanSummary, sourcePageView } from './scan-bundles';
import type { AgentInboxAcknowledgmentRow, AgentInboxAssignmentRow } from './rows';
import { assignMemberSample, assignSandboxItem } from './inbox-rows';
import type { AgentRow, MemberRow } from '../accounts/rows';
import { literalQueryOrThrow, literalTermsSql, receivedRangeSql, runSearch } from './search-index';
import { sqlRows, sqlRun } from '../shared/sql';

export function assignmentView(a: AgentInboxAssignmentRow) {
  return {
    id: a.id,
    item_id: a.item_id,
    source_domain: a.source_domain,
    environment: a.environment,
    agent_id: a.agent_id,
    revision: a.revision,
    assigned_at: a.assigned_at.toISOString(),
  };
}

export function inboxItemView(item: ItemRow) {
  return {
    id: item.id,
    reference_code: item.reference_code,
    item_kind: item.kind,
    created_at: item.received_at.toISOString(),
  };
}

/** Test agent keys always have the member sample in their inbox. */
async function ensureSampleAssignment(deps: Deps, auth: AuthContext): Promise<void> {
  if (!auth.testMode || !auth.agentId || !auth.memberId) return;
  const itemId = await ensureMemberSample(deps, auth.memberId);
  await assignMemberSample(
    deps.db,
    derivedUuid(`sample-assignment:${auth.memberId}:${auth.agentId}`),
    itemId,
    auth.agentId,
    auth.memberId,
  );
}

/** The caller's assignment of an item in its key's environment; 404 otherwise. */
export async function loadAssignment(
  deps: Deps,
  auth: AuthContext,
  itemId: string,
): Promise<{ item: ItemRow; assignment: AgentInboxAssignmentRow }> {
  await ensureSampleAssignment(deps, auth);
  const [assignment] = await sqlRows<AgentInboxAssignmentRow>(
    deps.db,
    `SELECT * FROM agent_inbox_assignments WHERE item_id = $1 AND agent_id = $2 AND environment = $3`,
    [itemId, auth.agentId, environmentOf(auth)],
  );
  const item = assignment ? await findItem(deps.db, itemId) : null;
  if (!assignment || !item) throw errors.notFound('Agent inbox item');
  return { item, assignment };
}

/** The assignment's columns beside ITEM_COLUMNS in the inbox list (a_ prefixed). */
interface InboxAssignmentColumns {
  a_id: string;
  a_source_domain: AgentInboxAssignmentRow['source_domain'];
  a_environment: AgentInboxAssignmentRow['environment'];
  a_agent_id: string;
  a_revision: number;
  a_assigned_at: Date;
}

export interface InboxListQuery {
  q?: string;
  limit: number;
  offset: number;
  received_after?: Date;
  received_before?: Date;
}

/** GET /v1/agent-inbox: metadata of assigned items; q is literal AND search. */
export async function listAgentInbox(deps: Deps, auth: AuthContext, query: InboxListQuery) {
  const literal = literalQueryOrThrow(query.q);
  if (literal && !auth.scopes.has('agent.read')) {
    throw new ApiError(403, 'Missing scope: agent.read (searching the agent inbox needs it)', {
      reason: 'insufficient_scope',
      details: { required_scopes: ['agent.read'] },
    });
  }
  await ensureSampleAssignment(deps, auth);
  const params: unknown[] = [auth.agentId, environmentOf(auth)];
  const where = ['a.agent_id = $1', 'a.environment = $2'];
  where.push(...receivedRangeSql({ after: query.received_after, before: query.received_before }, params));
  if (literal) {
    const t = literalTermsSql(literal.terms, params.length + 1);
    params.push(...t.params);
    where.push(t.sql);
  }
  const filterParams = [...params];
  params.push(query.limit, query.offset);
  const from = `FROM agent_inbox_assignments a JOIN physical_inbound_items i ON i.id = a.item_id WHERE ${where.join(' AND ')}`;
  const run = async (db: Pick<Deps['db'], 'query'>) => {
    const rows = await sqlRows<ItemColumns & InboxAssignmentColumns>(
      db,
      `SELECT ${ITEM_COLUMNS}, a.id AS a_id, a.source_domain AS a_source_domain, a.environment AS a_environment, a.agent_id AS a_agent_id,
              a.revision AS a_revision, a.assigned_at AS a_assigned_at
         ${from} ORDER BY i.received_at DESC, i.id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    const [count] = await sqlRows<{ total: string }>(db, `SELECT count(*) AS total ${from}`, filterParams);
    return { rows, total: Number(count.total) };
  };
  const { rows, total } = literal ? await runSearch(deps, run) : await run(deps.db);
  return {
    schema_version: AGENT_INBOX_SCHEMA_VERSION,
    environment: environmentOf(auth),
    items: rows.map((r) => {
      const item = toItemRow(r);
      return {
        item: inboxItemView(item),
        assignment: assignmentView({
          id: r.a_id,
          item_id: item.id,
          agent_id: r.a_agent_id,
          member_id: item.member_id,
          source_domain: r.a_source_domain,
          environment: r.a_environment,
          revision: r.a_revision,
          assigned_at: r.a_assigned_at,
        }),
      };
    }),
    pagination: paginationWithNext(total, query.limit, query.offset),
    search: { query: literal?.query ?? null, mode: SEARCH_MODE },
    filters: {
      received_after: query.received_after?.toISOString() ?? null,
      received_before: query.received_before?.toISOString() ?? null,
    },
  };
}

async function buildContext(deps: Deps, auth: AuthContext, item: ItemRow, assignment: AgentInboxAssignmentRow) {
  const [agent] = await sqlRows<Pick<AgentRow, 'id' | 'name'>>(deps.db, `SELECT id, name FROM agents WHERE id = $1`, [
    assignment.agent_id,
  ]);
  const doc = await currentInstructions(deps, assignment.agent_id);
  const text = doc?.text ?? PLATFORM_FALLBACK_INSTRUCTIONS;
  const bundles = await loadItemBundles(deps.db, item.id);
  const latest = bundles[bundles.length - 1];
  const context: Record<string, unknown> = {
    schema_version: AGENT_INBOX_SCHEMA_VERSION,
    environment: environmentOf(auth),
    test_mode: auth.testMode,
    agent: { id: agent.id, name: agent.name },
    assignment: assignmentView(assignment),
    item: inboxItemView(item),
    scan: latest
      ? {
          request_id: latest.request_id,
          bundle_id: latest.id,
          created_at: latest.created_at.toISOString(),
          pages: latest.pages.map((p) => ({
            page_id: p.id,
            page_number: p.page_number,
            source_sha256: p.source_sha256,
            source_kind: p.page_role,
          })),
        }
      : null,
    ocr: latest ? ocrRecord(latest) : null,
    instructions: {
      duties: text.slice(0, MAX_DUTIES_CHARS),
      version: doc?.version ?? 1,
      hash: doc?.hash ?? instructionsHash(PLATFORM_FALLBACK_INSTRUCTIONS),
    },
    contract: {
      version: AGENT_INBOX_CONTRACT_VERSION,
      instructions_path: `/v1/agents/${assignment.agent_id}/instructions`,
      api_reference_path: '/api-docs',
    },
    policy: { supported_actions: [], physical_actions_enabled: false, charges_enabled: false },
  };
  return { ...context, context_version: contextVersion(context) };
}

/** GET /v1/agent-inbox/{id}/context: versioned duties and saved OCR. Records a receipt. */
export async function getAgentInboxContext(deps: Deps, auth: AuthContext, itemId: string) {
  const { item, assignment } = await loadAssignment(deps, auth, itemId);
  const context = await buildContext(deps, auth, item, assignment);
  await sqlRun(
    deps.db,
    `INSERT INTO agent_inbox_receipts (assignment_id, item_id, agent_id, environment, context_version) VALUES ($1, $2, $3, $4, $5)`,
    [assignment.id, item.id, assignment.agent_id, assignment.environment, context.context_version],
  );
  return context;
}

/** GET /v1/agent-inbox/{id}/sources: every stored page of the item with its saved OCR. */
export async function getAgentInboxSources(
  deps: Deps,
  auth: AuthContext,
  itemId: string,
  page: { limit: number; offset: number },
) {
  const { item, assignment } = await loadAssignment(deps, auth, itemId);
  const bundles = await loadItemBundles(deps.db, item.id);
  const pages = bundles.flatMap((b) => b.pages.map((p) => sourcePageView(b, p)));
  return {
    schema_version: AGENT_INBOX_SCHEMA_VERSION,
    environment: environmentOf(auth),
    test_mode: auth.testMode,
    content_trust: CONTENT_TRUST,
    item: inboxItemView(item),
    assignment: assignmentView(assignment),
    pages: pages.slice(page.offset, page.offset + page.limit),
    pagination: pagination(pages.length, page.limit, page.offset),
  };
}

async function sampleBundles(deps: Deps, auth: AuthContext, itemId: string) {
  const { item } = await loadAssignment(deps, auth, itemId);
  if (item.id !== memberSampleId(item.member_id)) {
    throw codedError(404, 'NOT_FOUND', 'Scan history is available to test keys on the member sample only', {
      suggestedAction:
        'Read the scan history of the member sample (GET /v1/agent-inbox lists it); other items show their pages in their context.',
    });
  }
  return { item, bundles: await loadItemBundles(deps.db, item.id) };
}

/** GET /v1/agent-inbox/{id}/scans (test keys, member sample). */
export async function listAgentInboxScans(deps: Deps, auth: AuthContext, itemId: string) {
  const { item, bundles } = await sampleBundles(deps, auth, itemId);
  return { item_id: item.id, scans: bundles.map(scanSummary) };
}

/** GET /v1/agent-inbox/{id}/scans/{operationId}: one scan (operationId is its request id). */
export async function getAgentInboxScan(deps: Deps, auth: AuthContext, itemId: string, operationId: string) {
  const { item, bundles } = await sampleBundles(deps, auth, itemId);
  const bundle = bundles.find((b) => b.request_id === operationId);
  if (!bundle) throw errors.notFound('Scan');
  return {
    item_id: item.id,
    scan: { ...scanSummary(bundle), pages: bundle.pages.map((p) => sourcePageView(bundle, p)) },
  };
}

/** GET /v1/agent-inbox/activity: assignments received, context reads (receipts) and reported outcomes. */
/** One line of the agent's inbox activity: an assignment, a receipt or an outcome (null where that kind has none). */
interface InboxActivityRow {
  type: 'assigned' | 'receipt' | 'outcome';
  id: string;
  item_id: string;
  assignment_id: string;
  context_version: string | null;
  outcome: AgentInboxAcknowledgmentRow['outcome'] | null;
  run_id: string | null;
  note: string | null;
  created_at: Date;
  total: string;
}

export async function getAgentInboxActivity(deps: Deps, auth: AuthContext, page: { limit: number; offset: number }) {
  await ensureSampleAssignment(deps, auth);
  const rows = await sqlRows<InboxActivityRow>(
    deps.db,
    `SELECT *, count(*) OVER () AS total FROM (
       SELECT 'assigned' AS type, id, item_id, id AS assignment_id, NULL AS context_version, NULL AS outcome, NULL AS run_id,
              NULL AS note, assigned_at AS created_at
         FROM agent_inbox_assignments WHERE agent_id = $1 AND environment = $2
       UNION ALL
       SELECT 'receipt', id, item_id, assignment_id, context_version, NULL, NULL, NULL, created_at
         FROM agent_inbox_receipts WHERE agent_id = $1 AND environment = $2
       UNION ALL
       SELECT 'outcome', id, item_id, assignment_id, context_version, outcome, run_id, note, created_at
         FROM agent_inbox_acknowledgments WHERE agent_id = $1 AND environment = $2
     ) x ORDER BY created_at DESC, id DESC LIMIT $3 OFFSET $4`,
    [auth.agentId, environmentOf(auth), page.limit, page.offset],
  );
  return {
    environment: environmentOf(auth),
    activity: rows.map((r) => ({
      type: r.type,
      id: r.id,
      item_id: r.item_id,
      assignment_id: r.assignment_id,
      context_version: r.context_version,
      outcome: r.outcome,
      run_id: r.run_id,
      note: r.note,
      created_at: r.created_at.toISOString(),
    })),
    pagination: paginationWithNext(rows.length ? Number(rows[0].total) : 0, page.limit, page.offset),
  };
}

export interface AcknowledgmentBody {
  outcome: 'processed' | 'needs_review' | 'failed';
  context_version: string;
  run_id: string;
  note?: string;
}

/**
 * POST /v1/agent-inbox/{id}/acknowledgments: an outcome for the exact context the agent
 * read (once per Idempotency-Key: api/routes/physical-inbound/idempotent-requests.ts).
 */
export async function acknowledgeAgentInboxItem(
  deps: Deps,
  auth: AuthContext,
  itemId: string,
  body: AcknowledgmentBody,
) {
  const { item, assignment } = await loadAssignment(deps, auth, itemId);
  const context = await buildContext(deps, auth, item, assignment);
  if (context.context_version !== body.context_version) {
    throw errors.conflict(
      'CONTEXT_VERSION_MISMATCH',
      'The context changed since it was read; fetch it again and report against the new context_version.',
      {
        details: { current_context_version: context.context_version },
        suggestedAction: 'GET /v1/agent-inbox/{id}/context again and report against its context_version.',
      },
    );
  }
  const [ack] = await sqlRows<AgentInboxAcknowledgmentRow>(
    deps.db,
    `INSERT INTO agent_inbox_acknowledgments (assignment_id, item_id, agent_id, environment, outcome, context_version, run_id, note)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
    [
      assignment.id,
      item.id,
      assignment.agent_id,
      assignment.environment,
      body.outcome,
      body.context_version,
      body.run_id,
      body.note ?? null,
    ],
  );
  await recordActivity(deps.db, item, 'acknowledged', {
    outcome: body.outcome,
    run_id: body.run_id,
    agent_id: assignment.agent_id,
  });
  return {
    acknowledgment: {
      id: ack.id,
      item_id: item.id,
      assignment_id: assignment.id,
      outcome: ack.outcome,
      context_version: ack.context_version,
      run_id: ack.run_id,
      note: ack.note,
      created_at: ack.created_at.toISOString(),
    },
  };
}

export const SEED_SCENARIOS = ['two_page_letter', 'needs_review'] as const;

/**
 * POST /v1/agent-inbox/sandbox/seed: a test item from a fixture, assigned to the caller
 * (once per Idempotency-Key: api/routes/physical-inbound/idempotent-requests.ts).
 */
export async function seedAgentInboxSandbox(
  deps: Deps,
  auth: AuthContext,
  body: { scenario: (typeof SEED_SCENARIOS)[number] },
) {
  const fixture = loadFixture(body.scenario);
  await uploadFixture(deps, fixture);
  const created = await deps.db.transaction(async (tx) => {
    const [member] = await sqlRows<Pick<MemberRow, 'full_name' | 'email'>>(
      tx,
      `SELECT full_name, email FROM members WHERE id = $1`,
      [auth.memberId],
    );
    const made = (await createFixtureItem(tx, {
      memberId: auth.memberId!,
      agentId: auth.agentId,
      sourceDomain: 'sandbox',
      scenario: body.scenario,
      recipientName: member.full_name,
      recipientEmail: member.email,
    }))!;
    const assignment = await assignSandboxItem(tx, made.item.id, auth.agentId, auth.memberId);
    await recordActivity(tx, made.item, 'received', { source_domain: 'sandbox', scenario: body.scenario });
    return { ...made, assignment };
  });
  // A persisted sandbox change: its test events follow (received, scan_available, context_ready).
  await startAfterCommit(deps, `seed bundle ${created.bundleId}`, () =>
    startScanBundleWorkflow(deps, created.bundleId, created.item),
  );
  const bundles = await loadItemBundles(deps.db, created.item.id);
  return {
    scenario: body.scenario,
    item: inboxItemView(created.item),
    assignment: assignmentView(created.assignment),
    scan: bundles.length ? scanSummary(bundles[0]) : null,
  };
}
