// Sandbox fixtures of physical inbound: page images with their saved (template) OCR, the
// member sample (a static sandbox letter every test key of the member can read) and the
// seeded test items built from them.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Deps } from '../shared/deps';
import { sha256Hex } from '../../domain/accounts/keys';
import type { ItemKind } from '../../domain/physical-inbound/search';
import type { PageOrigin, PageRole } from '../../domain/physical-inbound/agent-inbox';
import { Db, insertFixtureItem, ItemRow, toItemRow } from './item-records';
import { insertFixtureBundle, insertFixturePage, insertFixtureScanRequest } from './scan-rows';
import type { MemberRow } from '../accounts/rows';
import { refreshSearchFields } from './search-index';
import { sqlRows } from '../shared/sql';

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
  const manifest = JSON.parse(readFileSync(path.join(FIXTURE_DIR, 'manifest.json'), 'utf8')) as Record<
    string,
    Omit<Fixture, 'name' | 'pages'> & { pages: FixtureManifestPage[] }
  >;
  const entry = manifest[name];
  if (!entry) throw new Error(`no inbound fixture named ${name}`);
  const fixture: Fixture = {
    name,
    kind: entry.kind,
    reference_prefix: entry.reference_prefix,
    sender: entry.sender,
    pages: entry.pages.map((p) => {
      const image = readFileSync(path.join(FIXTURE_DIR, p.file));
      return {
        ...p,
        image,
        text: readFileSync(path.join(FIXTURE_DIR, p.text_file), 'utf8').replace(/\n+$/, ''),
        sha256: sha256Hex(image),
      };
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
export async function addFixtureBundle(
  tx: Db,
  item: Pick<ItemRow, 'id' | 'member_id' | 'agent_id' | 'source_domain'>,
  fixture: Fixture,
  roles: PageRole[],
  announced: boolean,
): Promise<string> {
  const request = await insertFixtureScanRequest(tx, item);
  const bundle = await insertFixtureBundle(tx, request.id, item.id, announced);
  const origin: PageOrigin = item.source_domain === 'member_sample' ? 'sample' : 'physical';
  const extractedAt = bundle.created_at.toISOString();
  let n = 0;
  for (const page of fixture.pages.filter((p) => roles.includes(p.role))) {
    n++;
    await insertFixturePage(tx, {
      bundleId: bundle.id,
      itemId: item.id,
      pageNumber: n,
      role: page.role,
      origin,
      storageKey: fixtureStorageKey(page),
      sizeBytes: page.image.length,
      sourceSha256: page.sha256,
      ocrStatus: page.status,
      ocrText: page.text,
      uncertainSpans: page.uncertain_spans,
      provider: TEMPLATE_OCR.provider,
      model: TEMPLATE_OCR.model,
      completedAt: bundle.created_at,
      provenance: {
        kind: 'template_ocr',
        template_version: TEMPLATE_OCR.version,
        source_sha256: page.sha256,
        transcript_sha256: sha256Hex(page.text),
        extracted_at: extractedAt,
      },
    });
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
export async function createFixtureItem(
  tx: Db,
  input: NewFixtureItem,
): Promise<{ item: ItemRow; bundleId: string } | null> {
  const fixture = loadFixture(input.scenario);
  const reference =
    input.sourceDomain === 'member_sample'
      ? `${fixture.reference_prefix}-${input.memberId.slice(0, 8).toUpperCase()}`
      : `${fixture.reference_prefix}-${randomBytes(4).toString('hex').toUpperCase()}`;
  const row = await insertFixtureItem(tx, {
    id: input.id ?? null,
    reference_code: reference,
    member_id: input.memberId,
    agent_id: input.agentId,
    kind: fixture.kind,
    source_domain: input.sourceDomain,
    scenario: input.scenario,
    sender_name: fixture.sender,
    recipient_name: input.recipientName,
    recipient_email: input.recipientEmail,
  });
  if (!row) return null;
  const item = toItemRow(row);
  // Seeds announce themselves through their bundle's workflow (received first); the sample never does.
  const bundleId = await addFixtureBundle(
    tx,
    item,
    fixture,
    ['envelope', 'letter'],
    input.sourceDomain === 'member_sample',
  );
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
  const [exists] = await sqlRows<{ '?column?': number }>(
    deps.db,
    `SELECT 1 FROM physical_inbound_items WHERE id = $1`,
    [id],
  );
  if (exists) return id;
  const fixture = loadFixture('member_sample');
  await uploadFixture(deps, fixture);
  await deps.db.transaction(async (tx) => {
    const [member] = await sqlRows<Pick<MemberRow, 'full_name' | 'email'>>(
      tx,
      `SELECT full_name, email FROM members WHERE id = $1`,
      [memberId],
    );
    await createFixtureItem(tx, {
      id,
      memberId,
      agentId: null,
      sourceDomain: 'member_sample',
      scenario: 'member_sample',
      recipientName: member?.full_name ?? null,
      recipientEmail: member?.email ?? null,
    });
  });
  return id;
}
