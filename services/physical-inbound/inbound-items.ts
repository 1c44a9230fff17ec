// Physical inbound items: the one record of a piece in custody (letter or parcel) that
// packages, managed mailbox items and the agent inbox each present. This module owns
// the record's shared reads (scans, saved OCR, the literal search index, the activity
// timeline), the sandbox fixtures (the member sample and seeded items), and the
// managed-mailbox endpoints: list/search, detail, scans, sample reset and activity.
import { paginationWithNext } from '../../domain/shared/pagination';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { EntityManager } from 'typeorm';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { isAgentKey } from '../accounts/auth';
import { assertAgentOfMember } from '../shared/scoping';
import { errors } from '../../domain/shared/errors';
import { formatCents } from '../../domain/shared/money';
import { sha256Hex } from '../../domain/accounts/keys';
import { ItemKind, parseLiteralQuery, searchFields, SEARCH_MODE } from '../../domain/physical-inbound/search';
import { aggregateOcrStatus, CONTENT_TRUST, OcrPageStatus, PageOrigin, PageRole, sourcesKind } from '../../domain/physical-inbound/agent-inbox';
import { HandlingActionType, HandlingQuote, quoteHandling } from '../../domain/workflow-safe/handling';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  inboundReceivedWorkflowId, InboundReceivedWorkflowInput, scanBundleWorkflowId, ScanBundleWorkflowInput,
} from '../../workflows/physical-inbound/contracts';
import { AgentId, MemberId, ObjectId, ObjectStatus, TestMode } from '../../workflows/shared/search-attributes';

export type Db = Pick<EntityManager, 'query'>;
export type Environment = 'live' | 'test';
export type SourceDomain = 'internal_team' | 'sandbox' | 'member_sample';

export function environmentOf(auth: AuthContext): Environment {
  return auth.testMode ? 'test' : 'live';
}

export interface ItemRow {
  id: string;
  reference_code: string;
  member_id: string;
  agent_id: string | null;
  facility_id: string | null;
  mailbox_id: string | null;
  kind: ItemKind;
  environment: Environment;
  source_domain: SourceDomain;
  scenario: string | null;
  status: string;
  version: number;
  carrier: string | null;
  tracking_number: string | null;
  weight_oz: number | null;
  sender_name: string | null;
  recipient_name: string | null;
  recipient_email: string | null;
  received_at: Date;
  created_at: Date;
  updated_at: Date;
}

export const ITEM_COLUMNS = `i.id, i.reference_code, i.member_id, i.agent_id, i.facility_id, i.mailbox_id, i.kind, i.environment,
  i.source_domain, i.scenario, i.status, i.version, i.carrier, i.tracking_number, i.weight_oz, i.sender_name, i.recipient_name,
  i.recipient_email, i.received_at, i.created_at, i.updated_at`;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function toItemRow(row: any): ItemRow {
  return { ...row, weight_oz: row.weight_oz === null || row.weight_oz === undefined ? null : Number(row.weight_oz) };
}

export async function findItem(db: Db, id: string, opts: { forUpdate?: boolean } = {}): Promise<ItemRow | null> {
  const [row] = await db.query(`SELECT ${ITEM_COLUMNS} FROM physical_inbound_items i WHERE i.id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`, [id]);
  return row ? toItemRow(row) : null;
}

/** Runs an UPDATE/DELETE ... RETURNING; TypeORM answers those with [rows, count], so this returns the rows. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function updateReturning(db: Db, sql: string, params: unknown[]): Promise<any[]> {
  const result = await db.query(sql, params);
  return Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result;
}

/** Bumps the item's version (every change a reader could act on moves it). */
export async function bumpItem(db: Db, itemId: string, status?: string | null): Promise<number> {
  const [row] = await updateReturning(db,
    `UPDATE physical_inbound_items SET version = version + 1, status = COALESCE($2, status), updated_at = now() WHERE id = $1 RETURNING version`,
    [itemId, status ?? null],
  );
  return row.version;
}

// ---------------------------------------------------------------------------------------
// Visibility

/**
 * The managed-mailbox view: the key's environment, the caller's member, and for agent
 * keys the agent's own items plus the member sample. Anything else is 404.
 */
export function visibleToManagedMailbox(auth: AuthContext, item: ItemRow): boolean {
  if (item.member_id !== auth.memberId || item.environment !== environmentOf(auth)) return false;
  if (isAgentKey(auth)) return item.agent_id === auth.agentId || item.source_domain === 'member_sample';
  return true;
}

export async function loadManagedItem(deps: Deps, auth: AuthContext, id: string): Promise<ItemRow> {
  await ensureSampleForTestKey(deps, auth);
  const item = await findItem(deps.db, id);
  if (!item || !visibleToManagedMailbox(auth, item)) throw errors.notFound('Inbound item');
  return item;
}

// ---------------------------------------------------------------------------------------
// Scans, pages and saved OCR

export interface PageRow {
  id: string;
  bundle_id: string;
  item_id: string;
  page_number: number;
  page_role: PageRole;
  origin: PageOrigin;
  storage_key: string;
  content_type: string;
  size_bytes: number;
  source_sha256: string;
  created_at: Date;
  ocr_status: OcrPageStatus;
  ocr_text: string | null;
  ocr_is_blank: boolean | null;
  /** Mean word confidence of engine OCR (0-1); null for template OCR and unfinished pages. */
  ocr_confidence: string | null;
  ocr_uncertain_spans: Array<{ text: string; reason: string }>;
  ocr_provider: string | null;
  ocr_model: string | null;
  ocr_completed_at: Date | null;
  ocr_attempts: number;
  ocr_error_code: string | null;
  ocr_provenance: Record<string, unknown> | null;
}

export interface BundleRow {
  id: string;
  request_id: string;
  item_id: string;
  ocr_id: string;
  created_at: Date;
  pages: PageRow[];
}

/** Every scan bundle of the given items, oldest first, with their pages in order. */
export async function loadBundles(db: Db, itemIds: string[]): Promise<Map<string, BundleRow[]>> {
  const out = new Map<string, BundleRow[]>();
  if (!itemIds.length) return out;
  const bundles: BundleRow[] = await db.query(
    `SELECT id, request_id, item_id, ocr_id, created_at FROM scan_bundles WHERE item_id = ANY($1::uuid[]) ORDER BY created_at, id`, [itemIds]);
  const pages: PageRow[] = await db.query(
    `SELECT * FROM scan_pages WHERE item_id = ANY($1::uuid[]) ORDER BY page_number`, [itemIds]);
  const byBundle = new Map<string, PageRow[]>();
  for (const p of pages) (byBundle.get(p.bundle_id) ?? byBundle.set(p.bundle_id, []).get(p.bundle_id)!).push(p);
  for (const b of bundles) {
    b.pages = byBundle.get(b.id) ?? [];
    (out.get(b.item_id) ?? out.set(b.item_id, []).get(b.item_id)!).push(b);
  }
  return out;
}

/** One item's scan bundles, oldest first, with their pages in order. */
export async function loadItemBundles(db: Db, itemId: string): Promise<BundleRow[]> {
  return (await loadBundles(db, [itemId])).get(itemId) ?? [];
}

export function bundleOcrStatus(bundle: BundleRow): OcrPageStatus | null {
  return aggregateOcrStatus(bundle.pages.map((p) => p.ocr_status));
}

export function scanSummary(bundle: BundleRow) {
  return {
    request_id: bundle.request_id,
    bundle_id: bundle.id,
    created_at: bundle.created_at.toISOString(),
    page_count: bundle.pages.length,
    ocr_status: bundleOcrStatus(bundle),
  };
}

export function ocrPageView(p: PageRow) {
  return {
    page_id: p.id,
    page_number: p.page_number,
    source_sha256: p.source_sha256,
    status: p.ocr_status,
    text: p.ocr_text,
    is_blank: p.ocr_is_blank ?? false,
    confidence: p.ocr_confidence === null || p.ocr_confidence === undefined ? null : Number(p.ocr_confidence),
    uncertain_spans: p.ocr_uncertain_spans,
    provider: p.ocr_provider,
    model: p.ocr_model,
    completed_at: p.ocr_completed_at ? p.ocr_completed_at.toISOString() : null,
    attempts: p.ocr_attempts,
    error_code: p.ocr_error_code,
    ...(p.ocr_provenance ? { provenance: p.ocr_provenance } : {}),
  };
}

/** A stored page as agents and pages readers see it: where it came from and its saved OCR. */
export function sourcePageView(bundle: BundleRow, p: BundleRow['pages'][number]) {
  const ocr = ocrPageView(p);
  return {
    document_id: p.id,
    source_kind: sourcesKind({ role: p.page_role, origin: p.origin }),
    request_id: bundle.request_id,
    bundle_id: bundle.id,
    page_id: p.id,
    page_number: p.page_number,
    source_sha256: p.source_sha256,
    created_at: p.created_at.toISOString(),
    status: ocr.status,
    text: ocr.text,
    is_blank: ocr.is_blank,
    uncertain_spans: ocr.uncertain_spans,
    model: ocr.model,
    provider: ocr.provider,
  };
}

/** A bundle's OCR record, whatever state its pages are in (agent-inbox context). */
export function ocrRecord(bundle: BundleRow) {
  const models = [...new Set(bundle.pages.map((p) => p.ocr_model).filter((m): m is string => !!m))];
  const done = bundle.pages.map((p) => p.ocr_completed_at?.getTime() ?? 0);
  return {
    content_trust: CONTENT_TRUST,
    id: bundle.ocr_id,
    status: bundleOcrStatus(bundle),
    model: models.join(', ') || null,
    created_at: new Date(Math.max(bundle.created_at.getTime(), ...done)).toISOString(),
    pages: bundle.pages.map(ocrPageView),
  };
}

/** The saved OCR of a bundle, or null while none is available (queued or processing). */
export function savedOcr(bundle: BundleRow) {
  const status = bundleOcrStatus(bundle);
  return status === null || status === 'queued' || status === 'processing' ? null : ocrRecord(bundle);
}

// ---------------------------------------------------------------------------------------
// Activity timeline and search index

export async function recordActivity(db: Db, item: Pick<ItemRow, 'id' | 'member_id' | 'agent_id' | 'environment'>, kind: string, detail: Record<string, unknown> = {}): Promise<void> {
  await db.query(
    `INSERT INTO inbound_item_activity (item_id, member_id, agent_id, environment, kind, detail) VALUES ($1, $2, $3, $4, $5, $6)`,
    [item.id, item.member_id, item.agent_id, item.environment, kind, JSON.stringify(detail)],
  );
}

/** Rewrites the item's normalised search fields from its current record, scans and saved OCR. */
export async function refreshSearchFields(db: Db, itemId: string): Promise<void> {
  const item = await findItem(db, itemId);
  if (!item) return;
  const requests: Array<{ id: string }> = await db.query(`SELECT id FROM scan_requests WHERE item_id = $1`, [itemId]);
  const bundles = await loadItemBundles(db, itemId);
  const pages = bundles.flatMap((b) => b.pages);
  const fields = searchFields({
    itemId: item.id,
    referenceCode: item.reference_code,
    kind: item.kind,
    receivedAt: item.received_at,
    requestIds: requests.map((r) => r.id),
    bundleIds: bundles.map((b) => b.id),
    pageIds: pages.map((p) => p.id),
    recipientName: item.recipient_name,
    recipientEmail: item.recipient_email,
    ocrTexts: pages.filter((p) => (p.ocr_status === 'ready' || p.ocr_status === 'needs_review') && p.ocr_text).map((p) => p.ocr_text!),
  });
  await db.query(`DELETE FROM inbound_search_fields WHERE item_id = $1`, [itemId]);
  if (fields.length) {
    await db.query(
      `INSERT INTO inbound_search_fields (item_id, source, text) SELECT $1, s, t FROM unnest($2::text[], $3::text[]) AS x(s, t)`,
      [itemId, fields.map((f) => f.source), fields.map((f) => f.text)],
    );
  }
}

/**
 * SQL for "every term is a literal substring of some field of item `alias`". strpos
 * compares literally, so %, _ and quotes need no escaping.
 */
export function literalTermsSql(terms: string[], firstParam: number, alias = 'i'): { sql: string; params: string[] } {
  const sql = terms.map((_, n) =>
    `EXISTS (SELECT 1 FROM inbound_search_fields f WHERE f.item_id = ${alias}.id AND strpos(f.text, $${firstParam + n}) > 0)`).join(' AND ');
  return { sql, params: terms };
}

const SEARCH_TIMEOUT_MS = 5000;

/**
 * Runs a search query under a statement timeout. Any failure is a retryable 503: a
 * search never falls back to an unfiltered list.
 */
export async function runSearch<T>(deps: Deps, fn: (db: Db) => Promise<T>): Promise<T> {
  try {
    return await deps.db.transaction(async (tx) => {
      await tx.query(`SET LOCAL statement_timeout = ${SEARCH_TIMEOUT_MS}`);
      return fn(tx);
    });
  } catch (err) {
    deps.log.warn({ err }, 'inbound search failed');
    throw errors.unavailable('SEARCH_UNAVAILABLE', 'Search is unavailable right now; no unfiltered list is returned instead.');
  }
}

/** Parses q (literal AND terms) or answers 400 with the field. */
export function literalQueryOrThrow(q: string | undefined) {
  const parsed = parseLiteralQuery(q);
  if (!parsed.ok) throw errors.validation([parsed.error]);
  return parsed.value;
}

/** received_after (inclusive) and received_before (exclusive) as SQL conditions. */
export function receivedRangeSql(range: { after?: Date; before?: Date }, params: unknown[], alias = 'i'): string[] {
  const conditions: string[] = [];
  if (range.after) { params.push(range.after); conditions.push(`${alias}.received_at >= $${params.length}`); }
  if (range.before) { params.push(range.before); conditions.push(`${alias}.received_at < $${params.length}`); }
  return conditions;
}

// ---------------------------------------------------------------------------------------
// Workflows that publish what happened to an item (events come from activities)

/**
 * Starts a workflow (an existing one of that id is fine: its record already reached or is
 * on its way to an outcome) and marks the record started with `markStarted` ($1 = objectId).
 */
export interface InboundWorkflowAttributes { objectId: string; status: string; memberId: string; agentId: string | null; testMode: boolean }

/** Start options of a physical-inbound workflow (never a second run of a closed one). */
export function inboundStartOptions(deps: Deps, workflowId: string, args: unknown[], attrs: InboundWorkflowAttributes) {
  return {
    taskQueue: deps.config.taskQueue,
    workflowId,
    args,
    workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
    typedSearchAttributes: [
      { key: ObjectStatus, value: attrs.status }, { key: ObjectId, value: attrs.objectId }, { key: MemberId, value: attrs.memberId },
      { key: AgentId, value: attrs.agentId ?? '' }, { key: TestMode, value: attrs.testMode },
    ],
  };
}

export async function startOnce(deps: Deps, workflowType: string, workflowId: string, args: unknown[], attrs: InboundWorkflowAttributes, markStarted: string) {
  try {
    await deps.temporal.workflow.start(workflowType, { ...inboundStartOptions(deps, workflowId, args, attrs), workflowIdConflictPolicy: 'USE_EXISTING' });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  // The reconciler starts what is not marked (a start lost after the record was committed).
  await deps.db.query(markStarted, [attrs.objectId]);
}

/**
 * Starts a workflow once its record is committed. The commit is what counts: if the
 * start fails, the reconciler starts it later, so the caller still gets its answer.
 */
export async function startAfterCommit(deps: Deps, what: string, start: () => Promise<unknown>): Promise<void> {
  try {
    await start();
  } catch (err) {
    deps.log.warn({ err, what }, 'workflow start left to the reconciler');
  }
}

/** `inbound-item-<id>`: publishes inbound.received for a committed item. */
export async function startInboundReceivedWorkflow(deps: Deps, item: Pick<ItemRow, 'id' | 'member_id' | 'agent_id' | 'environment' | 'status'>): Promise<void> {
  const input: InboundReceivedWorkflowInput = { itemId: item.id, memberId: item.member_id, agentId: item.agent_id, testMode: item.environment === 'test' };
  await startOnce(deps, 'inboundReceivedWorkflow', inboundReceivedWorkflowId(item.id), [input],
    { objectId: item.id, status: item.status, memberId: item.member_id, agentId: item.agent_id, testMode: input.testMode },
    `UPDATE physical_inbound_items SET received_workflow_started_at = COALESCE(received_workflow_started_at, now()) WHERE id = $1`);
}

/** `inbound-scan-<bundle>`: publishes scan_available, runs OCR, saves it, matches rules, publishes context_ready. */
export async function startScanBundleWorkflow(deps: Deps, bundleId: string, item: Pick<ItemRow, 'id' | 'member_id' | 'agent_id' | 'environment'>): Promise<void> {
  const input: ScanBundleWorkflowInput = {
    bundleId, itemId: item.id, memberId: item.member_id, agentId: item.agent_id, testMode: item.environment === 'test',
  };
  await startOnce(deps, 'scanBundleWorkflow', scanBundleWorkflowId(bundleId), [input],
    { objectId: bundleId, status: 'queued', memberId: item.member_id, agentId: item.agent_id, testMode: input.testMode },
    `UPDATE scan_bundles SET workflow_started_at = COALESCE(workflow_started_at, now()) WHERE id = $1`);
}

// ---------------------------------------------------------------------------------------
// Quotes

export function quoteView(env: Environment, actionType: HandlingActionType, q: HandlingQuote) {
  const amount = env === 'test' ? 0 : q.amount_cents;
  return {
    action_type: actionType,
    amount_cents: amount,
    currency: 'usd' as const,
    display: formatCents(amount),
    handling_cents: q.handling_cents,
    postage_cents: q.postage_cents,
    ...(env === 'test' ? { estimated_live_cost_cents: q.amount_cents } : {}),
  };
}

export function openAndScanQuote(item: ItemRow) {
  return quoteView(item.environment, 'open_and_scan', quoteHandling({ kind: item.kind, actionType: 'open_and_scan' }));
}

// ---------------------------------------------------------------------------------------
// Sandbox fixtures: page images with their saved (template) OCR

interface FixtureManifestPage {
  file: string;
  text_file: string;
  role: PageRole;
  status: 'ready' | 'needs_review';
  uncertain_spans: Array<{ text: string; reason: string }>;
}

export interface FixturePage extends FixtureManifestPage {
  image: Buffer;
  text: string;
  sha256: string;
}

export interface Fixture {
  name: string;
  kind: ItemKind;
  reference_prefix: string;
  sender: string;
  pages: FixturePage[];
}

export const FIXTURE_DIR = path.join(__dirname, '..', '..', 'test', 'fixtures', 'inbound-pages');
export const TEMPLATE_OCR = { provider: 'template', model: 'template-ocr-v1', version: 1 };
const fixtureCache = new Map<string, Fixture>();

export function loadFixture(name: string): Fixture {
  const cached = fixtureCache.get(name);
  if (cached) return cached;
  const manifest = JSON.parse(readFileSync(path.join(FIXTURE_DIR, 'manifest.json'), 'utf8')) as Record<string, Omit<Fixture, 'name' | 'pages'> & { pages: FixtureManifestPage[] }>;
  const entry = manifest[name];
  if (!entry) throw new Error(`no inbound fixture named ${name}`);
  const fixture: Fixture = {
    name, kind: entry.kind, reference_prefix: entry.reference_prefix, sender: entry.sender,
    pages: entry.pages.map((p) => {
      const image = readFileSync(path.join(FIXTURE_DIR, p.file));
      return { ...p, image, text: readFileSync(path.join(FIXTURE_DIR, p.text_file), 'utf8').replace(/\n+$/, ''), sha256: sha256Hex(image) };
    }),
  };
  fixtureCache.set(name, fixture);
  return fixture;
}

export function fixtureStorageKey(page: FixturePage): string {
  return `inbound/fixtures/${page.sha256}.png`;
}

/** Uploads a fixture's page images (content-addressed, so repeating it is harmless). */
export async function uploadFixture(deps: Deps, fixture: Fixture): Promise<void> {
  for (const page of fixture.pages) await deps.storage.put(fixtureStorageKey(page), page.image, 'image/png');
}

/** A UUID derived from a name, so the member sample keeps one id per member across resets. */
export function derivedUuid(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  const variant = ((parseInt(h[16], 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export function memberSampleId(memberId: string): string {
  return derivedUuid(`member-sample:${memberId}`);
}

/**
 * Adds a fulfilled sandbox scan of the fixture's pages (`roles` picks which) to an item,
 * with the fixture's transcript saved as template OCR. `announced`: no bundle workflow
 * is to run for it (the static sample, or a scan whose events its handling workflow
 * publishes). Returns the bundle id.
 */
export async function addFixtureBundle(tx: Db, item: Pick<ItemRow, 'id' | 'member_id' | 'agent_id' | 'source_domain'>, fixture: Fixture,
  roles: PageRole[], announced: boolean): Promise<string> {
  const [request] = await tx.query(
    `INSERT INTO scan_requests (item_id, member_id, agent_id, scan_type, origin, status, fulfilled_at)
     VALUES ($1, $2, $3, 'document', 'sandbox', 'fulfilled', now()) RETURNING id`,
    [item.id, item.member_id, item.agent_id],
  );
  const [bundle] = await tx.query(
    `INSERT INTO scan_bundles (request_id, item_id, workflow_started_at) VALUES ($1, $2, CASE WHEN $3::boolean THEN now() END) RETURNING id, created_at`,
    [request.id, item.id, announced]);
  const origin: PageOrigin = item.source_domain === 'member_sample' ? 'sample' : 'physical';
  const extractedAt = (bundle.created_at as Date).toISOString();
  let n = 0;
  for (const page of fixture.pages.filter((p) => roles.includes(p.role))) {
    n++;
    await tx.query(
      `INSERT INTO scan_pages (bundle_id, item_id, page_number, page_role, origin, storage_key, content_type, size_bytes, source_sha256,
         ocr_status, ocr_text, ocr_is_blank, ocr_uncertain_spans, ocr_provider, ocr_model, ocr_completed_at, ocr_attempts, ocr_provenance)
       VALUES ($1, $2, $3, $4, $5, $6, 'image/png', $7, $8, $9, $10, $11, $12, $13, $14, $15, 0, $16)`,
      [bundle.id, item.id, n, page.role, origin, fixtureStorageKey(page), page.image.length, page.sha256, page.status, page.text,
        page.text.trim() === '', JSON.stringify(page.uncertain_spans), TEMPLATE_OCR.provider, TEMPLATE_OCR.model, bundle.created_at,
        JSON.stringify({ kind: 'template_ocr', template_version: TEMPLATE_OCR.version, source_sha256: page.sha256,
          transcript_sha256: sha256Hex(page.text), extracted_at: extractedAt })],
    );
  }
  return bundle.id;
}

export interface NewFixtureItem {
  id?: string;
  memberId: string;
  agentId: string | null;
  sourceDomain: 'sandbox' | 'member_sample';
  scenario: string;
  recipientName: string | null;
  recipientEmail: string | null;
}

/**
 * Creates a test-environment item from a fixture, already scanned. Null if the id exists.
 * A seed's inbound.received is published by its bundle's workflow (before
 * inbound.scan_available), so the item itself needs no workflow.
 */
export async function createFixtureItem(tx: Db, input: NewFixtureItem): Promise<{ item: ItemRow; bundleId: string } | null> {
  const fixture = loadFixture(input.scenario);
  const reference = input.sourceDomain === 'member_sample'
    ? `${fixture.reference_prefix}-${input.memberId.slice(0, 8).toUpperCase()}`
    : `${fixture.reference_prefix}-${randomBytes(4).toString('hex').toUpperCase()}`;
  const [row] = await tx.query(
    `INSERT INTO physical_inbound_items (id, reference_code, member_id, agent_id, kind, environment, source_domain, scenario, status,
       sender_name, recipient_name, recipient_email, received_workflow_started_at)
     VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4, $5, 'test', $6, $7, 'stored', $8, $9, $10, now())
     ON CONFLICT DO NOTHING RETURNING ${ITEM_COLUMNS.replace(/i\./g, '')}`,
    [input.id ?? null, reference, input.memberId, input.agentId, fixture.kind, input.sourceDomain, input.scenario, fixture.sender,
      input.recipientName, input.recipientEmail],
  );
  if (!row) return null;
  const item = toItemRow(row);
  // Seeds announce themselves through their bundle's workflow (received first); the sample never does.
  const bundleId = await addFixtureBundle(tx, item, fixture, ['envelope', 'letter'], input.sourceDomain === 'member_sample');
  await refreshSearchFields(tx, item.id);
  return { item, bundleId };
}

/**
 * The member sample: a static sandbox letter (envelope and contents, template OCR) that
 * every test key of the member can read. Materialised on first read; reading it emits
 * nothing.
 */
export async function ensureMemberSample(deps: Deps, memberId: string): Promise<string> {
  const id = memberSampleId(memberId);
  const [exists] = await deps.db.query(`SELECT 1 FROM physical_inbound_items WHERE id = $1`, [id]);
  if (exists) return id;
  const fixture = loadFixture('member_sample');
  await uploadFixture(deps, fixture);
  await deps.db.transaction(async (tx) => {
    const [member] = await tx.query(`SELECT full_name, email FROM members WHERE id = $1`, [memberId]);
    await createFixtureItem(tx, {
      id, memberId, agentId: null, sourceDomain: 'member_sample', scenario: 'member_sample',
      recipientName: member?.full_name ?? null, recipientEmail: member?.email ?? null,
    });
  });
  return id;
}

/** Test keys always have their member's sample to read. */
async function ensureSampleForTestKey(deps: Deps, auth: AuthContext): Promise<void> {
  if (auth.testMode && auth.memberId) await ensureMemberSample(deps, auth.memberId);
}

// ---------------------------------------------------------------------------------------
// Managed mailbox endpoints

export interface ItemListQuery {
  q?: string;
  received_after?: Date;
  received_before?: Date;
  status?: string;
  kind?: ItemKind;
  agent_id?: string;
  limit: number;
  offset: number;
}

export interface OperationSummary {
  id: string;
  action_type: string;
  status: string;
  version: number;
}

async function openOperations(db: Db, itemIds: string[]): Promise<Map<string, OperationSummary>> {
  const rows = itemIds.length ? await db.query(
    `SELECT id, item_id, action_type, status, version FROM handling_operations
      WHERE item_id = ANY($1::uuid[]) AND status IN ('awaiting_member_approval','awaiting_facility','accepted')`, [itemIds]) : [];
  return new Map(rows.map((r: OperationSummary & { item_id: string }) => [r.item_id, { id: r.id, action_type: r.action_type, status: r.status, version: r.version }]));
}

export function managedItemView(item: ItemRow, bundles: BundleRow[], open: OperationSummary | null) {
  const latest = bundles[bundles.length - 1];
  const handleable = ['received', 'stored', 'held'].includes(item.status) && !open;
  return {
    object: 'inbound_item' as const,
    id: item.id,
    reference_code: item.reference_code,
    kind: item.kind,
    status: item.status,
    version: item.version,
    environment: item.environment,
    source_domain: item.source_domain,
    mailbox_id: item.mailbox_id,
    agent_id: item.agent_id,
    carrier: item.carrier,
    tracking_number: item.tracking_number,
    weight_oz: item.weight_oz,
    sender_name: item.sender_name,
    recipient_name: item.recipient_name,
    received_at: item.received_at.toISOString(),
    scan_count: bundles.length,
    latest_scan: latest ? scanSummary(latest) : null,
    open_operation: open,
    available_actions: handleable ? ['open_and_scan'] : [],
    quotes: { open_and_scan: openAndScanQuote(item) },
  };
}

export async function managedItemViews(db: Db, items: ItemRow[]) {
  const ids = items.map((i) => i.id);
  const [bundles, open] = await Promise.all([loadBundles(db, ids), openOperations(db, ids)]);
  return items.map((i) => managedItemView(i, bundles.get(i.id) ?? [], open.get(i.id) ?? null));
}

/**
 * The managed-mailbox agent scope on item `i`: agent keys see their own agent's items
 * and the member sample; member keys may narrow to one of their agents with agent_id.
 */
async function pushAgentScope(deps: Deps, auth: AuthContext, agentId: string | undefined, params: unknown[], where: string[]): Promise<void> {
  if (isAgentKey(auth)) {
    params.push(auth.agentId);
    where.push(`(i.agent_id = $${params.length} OR i.source_domain = 'member_sample')`);
  } else if (agentId) {
    await assertAgentOfMember(deps, auth, agentId);
    params.push(agentId);
    where.push(`i.agent_id = $${params.length}`);
  }
}

/** GET /v1/inbound-items: literal AND search over the caller's items (search_inbound_items). */
export async function listInboundItems(deps: Deps, auth: AuthContext, query: ItemListQuery) {
  const literal = literalQueryOrThrow(query.q);
  await ensureSampleForTestKey(deps, auth);
  const params: unknown[] = [auth.memberId, environmentOf(auth)];
  const where = ['i.member_id = $1', 'i.environment = $2'];
  await pushAgentScope(deps, auth, query.agent_id, params, where);
  where.push(...receivedRangeSql({ after: query.received_after, before: query.received_before }, params));
  if (query.status) { params.push(query.status); where.push(`i.status = $${params.length}`); }
  if (query.kind) { params.push(query.kind); where.push(`i.kind = $${params.length}`); }
  if (literal) {
    const t = literalTermsSql(literal.terms, params.length + 1);
    params.push(...t.params);
    where.push(t.sql);
  }
  params.push(query.limit, query.offset);
  const sql = `SELECT ${ITEM_COLUMNS}, count(*) OVER () AS total FROM physical_inbound_items i WHERE ${where.join(' AND ')}
    ORDER BY i.received_at DESC, i.id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`;
  const rows = literal ? await runSearch(deps, (db) => db.query(sql, params)) : await deps.db.query(sql, params);
  let total = rows.length ? Number(rows[0].total) : 0;
  if (!rows.length && query.offset > 0) {
    const countSql = `SELECT count(*) AS total FROM physical_inbound_items i WHERE ${where.join(' AND ')}`;
    const countParams = params.slice(0, -2);
    const [c] = literal ? await runSearch(deps, (db) => db.query(countSql, countParams)) : await deps.db.query(countSql, countParams);
    total = Number(c.total);
  }
  const items = rows.map(toItemRow);
  return {
    items: await managedItemViews(deps.db, items),
    pagination: paginationWithNext(total, query.limit, query.offset),
    search: literal ? { query: literal.query, mode: SEARCH_MODE, terms: literal.terms } : null,
    filters: {
      received_after: query.received_after?.toISOString() ?? null,
      received_before: query.received_before?.toISOString() ?? null,
      status: query.status ?? null,
      kind: query.kind ?? null,
    },
  };
}

export async function getInboundItem(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadManagedItem(deps, auth, id);
  const [view] = await managedItemViews(deps.db, [item]);
  return { item: view };
}

/** GET /v1/inbound-items/{id}/scans: per-scan saved OCR; never queues extraction. */
export async function listInboundItemScans(deps: Deps, auth: AuthContext, id: string) {
  const item = await loadManagedItem(deps, auth, id);
  const bundles = await loadItemBundles(deps.db, item.id);
  return {
    item_id: item.id,
    scans: bundles.map((b) => ({ ...scanSummary(b), ocr: savedOcr(b) })),
  };
}

/** GET /v1/inbound-items/{id}/pages: every stored page with its saved OCR (get_inbound_pages). */
export async function getInboundItemPages(deps: Deps, auth: AuthContext, id: string, page: { limit: number; offset: number }) {
  const item = await loadManagedItem(deps, auth, id);
  const bundles = await loadItemBundles(deps.db, item.id);
  const pages = bundles.flatMap((b) => b.pages.map((p) => sourcePageView(b, p)));
  return {
    item_id: item.id,
    content_trust: CONTENT_TRUST,
    pages: pages.slice(page.offset, page.offset + page.limit),
    pagination: paginationWithNext(pages.length, page.limit, page.offset),
  };
}

export async function listInboundActivity(deps: Deps, auth: AuthContext, query: { item_id?: string; agent_id?: string; limit: number; offset: number }) {
  await ensureSampleForTestKey(deps, auth);
  const params: unknown[] = [auth.memberId, environmentOf(auth)];
  const where = ['a.member_id = $1', 'a.environment = $2'];
  await pushAgentScope(deps, auth, query.agent_id, params, where);
  if (query.item_id) { params.push(query.item_id); where.push(`a.item_id = $${params.length}`); }
  params.push(query.limit, query.offset);
  const rows = await deps.db.query(
    `SELECT a.id, a.item_id, a.agent_id, a.kind, a.detail, a.created_at, count(*) OVER () AS total
       FROM inbound_item_activity a JOIN physical_inbound_items i ON i.id = a.item_id
      WHERE ${where.join(' AND ')} ORDER BY a.created_at DESC, a.id DESC LIMIT $${params.length - 1} OFFSET $${params.length}`, params);
  return {
    activity: rows.map((r: { id: string; item_id: string; agent_id: string | null; kind: string; detail: unknown; created_at: Date }) => ({
      id: r.id, item_id: r.item_id, agent_id: r.agent_id, kind: r.kind, detail: r.detail, created_at: r.created_at.toISOString(),
    })),
    pagination: paginationWithNext(rows.length ? Number(rows[0].total) : 0, query.limit, query.offset),
  };
}
