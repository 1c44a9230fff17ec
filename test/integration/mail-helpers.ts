// Shared setup for outbound mail integration tests: real PDF letters, multipart forms,
// a member with an agent key, and small waits on the database.
import { randomBytes } from 'node:crypto';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { TestApp } from '../helpers/app';
import { client } from '../helpers/http';
import { newMember } from '../helpers/factories';
import { newAgent, newCredential } from '../helpers/agents';
import { assignMemberFacility } from '../../services/operations/facilities';

/** A real PDF of `pages` pages; the text makes each letter's bytes unique unless given. */
export async function letterPdf(pages = 1, text = `Letter ${randomBytes(6).toString('hex')}`): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++)
    doc.addPage([612, 792]).drawText(`${text} p${i + 1}`, { x: 72, y: 700, size: 12, font });
  doc.setCreationDate(new Date('2026-01-01T00:00:00Z'));
  doc.setModificationDate(new Date('2026-01-01T00:00:00Z'));
  return Buffer.from(await doc.save());
}

export const RECIPIENT = {
  recipient_name: 'Jane Doe',
  recipient_line1: '123 Main St',
  recipient_city: 'Austin',
  recipient_state: 'TX',
  recipient_zip: '78701',
};

export function letterForm(
  document: Buffer | null,
  fields: Record<string, string | number | boolean> = {},
  filename = 'letter.pdf',
): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries({ ...RECIPIENT, ...fields })) form.append(k, String(v));
  if (document) form.append('document', new Blob([new Uint8Array(document)], { type: 'application/pdf' }), filename);
  return form;
}

export interface Sender {
  memberId: string;
  memberKey: string;
  agentId: string;
  key: string;
  /** Headers an agent key sends on mutating calls. */
  headers: Record<string, string>;
}

/**
 * A member with credits, one agent and one agent credential (live or test). With
 * `facilityId` the member's live work goes to that facility (as `facility:assign` does), so a
 * suite drives its own facility whatever other suites of the run set up.
 */
export async function newSender(
  app: TestApp,
  opts: {
    creditsCents?: number;
    environment?: 'live' | 'test';
    credential?: Record<string, unknown>;
    facilityId?: string;
  } = {},
): Promise<Sender> {
  const member = await newMember(app.deps, { creditsCents: opts.creditsCents ?? 0 });
  if (opts.facilityId) await assignMemberFacility(app.deps, member.member_id, opts.facilityId);
  const agent = await newAgent(app.baseUrl, member.key);
  const credential = await newCredential(app.baseUrl, member.key, agent.id, {
    environment: opts.environment ?? 'live',
    ...opts.credential,
  });
  return {
    memberId: member.member_id,
    memberKey: member.key,
    agentId: agent.id,
    key: credential.key,
    headers: { 'x-service-md-version': '1' },
  };
}

export function api(app: TestApp) {
  return client(app.baseUrl);
}

/** POST /v1/mail as the sender's agent key. */
export function sendLetter(app: TestApp, s: Sender, form: FormData, headers: Record<string, string> = {}) {
  return api(app)('POST', '/v1/mail', { key: s.key, form, headers: { ...s.headers, ...headers } });
}

export async function waitFor<T>(
  fn: () => Promise<T | null | undefined | false>,
  what: string,
  timeoutMs = 30000,
): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function mailEvents(
  app: TestApp,
  id: string,
): Promise<{ event_type: string; payload: Record<string, any> }[]> {
  return app.deps.db.query(
    `SELECT event_type, payload FROM events WHERE object_type = 'outbound_mail' AND object_id = $1 ORDER BY created_at, id`,
    [id],
  );
}

export async function balance(app: TestApp, memberId: string): Promise<number> {
  const [row] = await app.deps.db.query(
    `SELECT COALESCE(SUM(amount_cents), 0)::int AS b FROM credits_ledger WHERE member_id = $1`,
    [memberId],
  );
  return row.b;
}

export async function ledger(
  app: TestApp,
  id: string,
): Promise<{ kind: string; amount_cents: number; entry_key: string }[]> {
  return app.deps.db.query(
    `SELECT kind, amount_cents, entry_key FROM credits_ledger WHERE reference_id = $1 ORDER BY created_at`,
    [id],
  );
}

export async function mailCount(app: TestApp, memberId: string): Promise<number> {
  const [row] = await app.deps.db.query(`SELECT count(*)::int AS n FROM outbound_mail WHERE member_id = $1`, [
    memberId,
  ]);
  return row.n;
}
