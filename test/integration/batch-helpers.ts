// Shared pieces of the batch mail integration tests: template PDFs, recipient CSVs,
// multipart bodies, keys of every kind, and polling.
import { PDFDocument } from 'pdf-lib';
import type { Deps } from '../../services/shared/deps';
import { insertMemberKey, createFacility } from '../../services/accounts/accounts';
import { generateKey, hashKey, keyPrefixOf } from '../../domain/accounts/keys';
import { balanceCents } from '../../services/billing/credits';
import { client } from '../helpers/http';

export async function pdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  for (let i = 0; i < pages; i++) doc.addPage([432, 288]);
  return Buffer.from(await doc.save());
}

/** n distinct, valid recipients (plus optional extra raw lines). */
export function recipientsCsv(n: number, extraLines: string[] = []): Buffer {
  const lines = ['name,address,address2,city,state,zip'];
  for (let i = 1; i <= n; i++)
    lines.push(`Recipient ${i},${i} Main St,,Austin,TX,${String(10000 + (i % 89999)).padStart(5, '0')}`);
  return Buffer.from([...lines, ...extraLines].join('\n') + '\n');
}

export interface DraftFields {
  job_name?: string;
  mail_type?: string;
  mailing_class?: string;
  duplex?: string;
  color?: string;
  column_map?: string;
  [extra: string]: string | undefined;
}

export function batchForm(template: Buffer | null, csv: Buffer | null, fields: DraftFields = {}): FormData {
  const form = new FormData();
  const all: DraftFields = {
    job_name: 'Spring mailer',
    mail_type: 'postcard_4x6',
    mailing_class: 'first_class',
    ...fields,
  };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) form.append(k, v);
  if (template) form.append('template', new Blob([template], { type: 'application/pdf' }), 'template.pdf');
  if (csv) form.append('recipients', new Blob([csv], { type: 'text/csv' }), 'recipients.csv');
  return form;
}

export async function testKeyFor(deps: Deps, memberId: string): Promise<string> {
  return deps.db.transaction(
    async (tx) => (await insertMemberKey(tx, memberId, { name: 'sandbox', environment: 'test' })).key,
  );
}

/** A facility key for the facility a batch was assigned to (assignment picks the oldest active facility). */
export async function facilityKeyFor(deps: Deps, facilityId: string): Promise<string> {
  const key = generateKey('facility');
  await deps.db.query(`INSERT INTO facility_keys (facility_id, key_hash, key_prefix) VALUES ($1, $2, $3)`, [
    facilityId,
    hashKey(key),
    keyPrefixOf(key),
  ]);
  return key;
}

export async function ensureFacility(deps: Deps): Promise<void> {
  const [row] = await deps.db.query(`SELECT id FROM facilities WHERE status = 'active' LIMIT 1`);
  if (!row) await createFacility(deps, 'Test print facility');
}

export async function ledger(
  deps: Deps,
  batchId: string,
): Promise<Array<{ kind: string; amount_cents: number; entry_key: string }>> {
  return deps.db.query(
    `SELECT kind, amount_cents, entry_key FROM credits_ledger WHERE reference_type = 'batch' AND reference_id = $1 ORDER BY created_at, entry_key`,
    [batchId],
  );
}

export const balance = (deps: Deps, memberId: string) => balanceCents(deps.db, memberId);

export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 60000,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls GET /v1/batch-mail/:id until the status is one of `statuses`. */
export async function waitForStatus(baseUrl: string, key: string, id: string, statuses: string[], timeoutMs = 60000) {
  const api = client(baseUrl);
  return waitFor(
    `batch ${id} to reach ${statuses.join('/')}`,
    async () => {
      const res = await api('GET', `/v1/batch-mail/${id}`, { key });
      return statuses.includes(res.body?.batch?.status) ? res.body : undefined;
    },
    timeoutMs,
  );
}
