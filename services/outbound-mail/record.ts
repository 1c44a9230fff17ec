// How an outbound piece looks to the outside: the canonical record (REST, MCP), the
// human_review block, and the mail.* event payload that webhooks carry. Signed URLs
// are minted fresh on every call (1-hour expiry).
import type { Deps } from '../shared/deps';
import { publishEvent } from '../webhooks/events';
import { currentInstructions, InstructionsDocument } from '../accounts/instructions';
import { formatCents } from '../../domain/shared/money';
import { formatAddressLines } from '../../domain/outbound-mail/address';
import { mailboxIdFor } from '../../domain/accounts/agents';
import { contentDisposition } from '../../domain/shared/downloads';
import type { MailStatusName, PhotoCategory } from '../../domain/workflow-safe/mail-rules';
import { scheduledNextStep } from './scheduled-send';
import type { AddressCheck } from '../../domain/outbound-mail/address-check';
import { storedAddressCheck } from './address-review';
import { pieceProofUrl } from './print-proofs';
import type { MailRow, PhotoRow } from './rows';
import { sqlFirst, sqlRows, type Queryable } from '../shared/sql';

export type { MailRow, PhotoRow };

export interface FulfillmentPhoto {
  category: PhotoCategory;
  url: string;
  uploaded_at: string;
}

export async function loadMailRow(
  db: Queryable,
  id: string,
  opts: { forUpdate?: boolean } = {},
): Promise<MailRow | null> {
  return sqlFirst<MailRow>(db, `SELECT * FROM outbound_mail WHERE id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`, [id]);
}

export async function loadPhotos(db: Queryable, ids: string[]): Promise<Map<string, PhotoRow[]>> {
  const out = new Map<string, PhotoRow[]>();
  if (!ids.length) return out;
  const rows = await sqlRows<PhotoRow>(
    db,
    `SELECT outbound_mail_id, category, storage_key, content_type, uploaded_at FROM outbound_mail_photos
      WHERE outbound_mail_id = ANY($1::uuid[]) ORDER BY uploaded_at, storage_key`,
    [ids],
  );
  for (const r of rows) out.set(r.outbound_mail_id, [...(out.get(r.outbound_mail_id) ?? []), r]);
  return out;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function isPdf(row: Pick<MailRow, 'document_content_type'>): boolean {
  return row.document_content_type === 'application/pdf';
}

/** A fresh signed URL of the stored document, shown inline and saved under the sender's file name. */
export function signedDocumentUrl(
  deps: Deps,
  row: Pick<MailRow, 'document_key' | 'document_filename'>,
): Promise<string> {
  const disposition = contentDisposition(row.document_filename, {
    type: 'inline',
    fallbackName: row.document_key.split('/').pop()!,
  });
  return deps.storage.signedUrl(row.document_key, { contentDisposition: disposition });
}

export async function signedPhotos(deps: Deps, photos: PhotoRow[]): Promise<FulfillmentPhoto[]> {
  return Promise.all(
    photos.map(async (p) => ({
      category: p.category,
      url: await deps.storage.signedUrl(p.storage_key),
      uploaded_at: p.uploaded_at.toISOString(),
    })),
  );
}

export function documentPreviewUrl(deps: Deps, id: string): string {
  return `${deps.config.baseUrl}/v1/mail/${id}/document`;
}

/** What the caller pays or will pay: nothing in the sandbox, the live price otherwise. */
export function creditsRequired(row: Pick<MailRow, 'test_mode' | 'price_cents'>): number {
  return row.test_mode ? 0 : row.price_cents;
}

export function costDisplay(row: Pick<MailRow, 'test_mode' | 'cost_cents' | 'price_cents'>): string {
  return row.test_mode
    ? `${formatCents(0)} (test mode; live cost ${formatCents(row.price_cents)})`
    : formatCents(row.cost_cents);
}

/** The recipient or return address with its printed lines (null for an incomplete return address). */
export function mailAddress(row: MailRow, side: 'recipient' | 'return') {
  if (side === 'recipient') {
    const a = {
      name: row.recipient_name,
      company: row.recipient_company,
      line1: row.recipient_line1,
      line2: row.recipient_line2,
      city: row.recipient_city,
      state: row.recipient_state,
      zip: row.recipient_zip,
      country: row.recipient_country,
    };
    return { ...a, formatted: formatAddressLines(a).join('\n') };
  }
  if (!row.return_line1 || !row.return_city || !row.return_state || !row.return_zip) return null;
  const a = {
    name: row.return_name,
    company: row.return_company,
    line1: row.return_line1,
    line2: row.return_line2,
    city: row.return_city,
    state: row.return_state,
    zip: row.return_zip,
    country: 'US',
  };
  return { ...a, formatted: formatAddressLines(a).join('\n') };
}

function nextStep(row: MailRow): string {
  switch (row.status) {
    case 'pending_approval':
      return (
        `Awaiting the account owner's approval: POST /v1/mail/${row.id}/approve (or /reject) with a member key, or \`npm run admin -- approve --mail ${row.id}\`. ` +
        (row.test_mode ? 'Sandbox pieces are never charged.' : 'Credits are debited only on approval.')
      );
    case 'funding_pending':
      return (
        `Waits for its Business mail run ${row.mail_run_id} to be funded (POST /v1/mail-runs/${row.mail_run_id}/commit); nothing is charged until then. ` +
        'It is submitted once the run is funded, and cancelled if the run is cancelled or its window closes unfunded.'
      );
    case 'submitted':
      return (
        scheduledNextStep(row) ??
        (row.test_mode
          ? `Sandbox: POST /v1/test/mail/${row.id}/advance to simulate printing; DELETE /v1/mail/${row.id} cancels.`
          : row.printing_started_at
            ? 'The facility is printing this piece; it can no longer be cancelled.'
            : `Queued for printing. DELETE /v1/mail/${row.id} cancels and refunds until printing starts.`)
      );
    case 'ready':
      return row.test_mode
        ? `Sandbox: POST /v1/test/mail/${row.id}/advance to simulate dispatch.`
        : 'Printed and photographed; waiting to be handed to the carrier.';
    case 'mailed':
      return row.test_mode
        ? `Sandbox: POST /v1/test/mail/${row.id}/advance to simulate delivery.`
        : "In the carrier's hands; tracking_number is set when the class is tracked.";
    case 'delivered':
      return 'Delivered. Nothing left to do.';
    case 'failed':
      return row.carrier_delivery_failed
        ? 'The carrier could not deliver the piece (see error_message); postage was spent. Send a new piece if it should still go out.'
        : 'The facility could not print or dispatch the piece (see error_message); its debit was refunded. Send a new piece if it should still go out.';
    case 'cancelled':
      return 'Cancelled; nothing will be printed, and any debit for it was refunded.';
  }
}

const SOURCE_CONTENT_TYPES = {
  html: 'text/html',
  markdown: 'text/markdown',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
} as const;

export function humanReview(deps: Deps, row: MailRow) {
  // Live pieces are debited at submission, on approval when they needed one, or by their mail run's funding.
  const charged = !row.test_mode && (row.submitted_at !== null || row.run_funded_at !== null);
  return {
    send_to: mailAddress(row, 'recipient'),
    return_address: mailAddress(row, 'return'),
    mail_class: row.mail_class,
    cost: {
      cost_cents: row.cost_cents,
      cost_display: costDisplay(row),
      credits_required_cents: creditsRequired(row),
      ...(row.test_mode ? { estimated_live_cost_cents: row.price_cents } : {}),
      charged,
      refunded: charged && (row.status === 'cancelled' || (row.status === 'failed' && !row.carrier_delivery_failed)),
    },
    document: {
      filename: row.document_filename,
      type: row.document_type,
      content_type: row.document_content_type,
      page_count: row.page_count,
      page_count_source: row.page_count_source,
      size_bytes: row.document_size_bytes,
      sha256: row.document_sha256,
      color: row.color,
      duplex: row.duplex,
      simulated: row.simulated_document,
      source: row.source_type
        ? {
            type: row.source_type,
            filename: row.source_filename,
            content_type: SOURCE_CONTENT_TYPES[row.source_type],
            size_bytes: row.source_size_bytes!,
            sha256: row.source_sha256!,
            layout_page_count: row.source_page_count!,
          }
        : null,
      template: row.template_id ? { id: row.template_id, version: row.template_version! } : null,
    },
    safeguards: row.safeguards,
    preview_url: documentPreviewUrl(deps, row.id),
    next_step: nextStep(row),
  };
}

/** The canonical outbound mail record, with fresh 1-hour signed URLs. */
export async function toMailRecord(deps: Deps, row: MailRow, photos: PhotoRow[]) {
  return {
    id: row.id,
    object: 'outbound_mail' as const,
    status: row.status,
    mail_class: row.mail_class,
    agent_id: row.agent_id,
    mailbox_id: row.agent_id ? mailboxIdFor(row.agent_id) : null,
    recipient_name: row.recipient_name,
    recipient_company: row.recipient_company,
    recipient_line1: row.recipient_line1,
    recipient_line2: row.recipient_line2,
    recipient_city: row.recipient_city,
    recipient_state: row.recipient_state,
    recipient_zip: row.recipient_zip,
    recipient_country: row.recipient_country,
    return_name: row.return_name,
    return_company: row.return_company,
    return_line1: row.return_line1,
    return_line2: row.return_line2,
    return_city: row.return_city,
    return_state: row.return_state,
    return_zip: row.return_zip,
    page_count: row.page_count,
    color: row.color,
    duplex: row.duplex,
    cost_cents: row.cost_cents,
    cost_display: costDisplay(row),
    credits_required_cents: creditsRequired(row),
    ...(row.test_mode ? { estimated_live_cost_cents: row.price_cents } : {}),
    cost_breakdown: row.cost_breakdown,
    tracking_number: row.tracking_number,
    carrier: row.carrier,
    dispatch_method: row.dispatch_method,
    error_message: row.error_message,
    carrier_delivery_failed: row.carrier_delivery_failed,
    failure_stage: row.failure_stage,
    failure_source: row.failure_source,
    cancellation_reason: row.cancellation_reason,
    requires_approval: row.approval_source !== null,
    approved_at: iso(row.approved_at),
    submitted_at: iso(row.submitted_at),
    send_after: iso(row.send_after),
    ready_at: iso(row.ready_at),
    mailed_at: iso(row.mailed_at),
    delivered_at: iso(row.delivered_at),
    failed_at: iso(row.failed_at),
    cancelled_at: iso(row.cancelled_at),
    created_at: row.created_at.toISOString(),
    document_preview_url: documentPreviewUrl(deps, row.id),
    pdf_url: isPdf(row) ? await signedDocumentUrl(deps, row) : null,
    proof_url: await pieceProofUrl(deps, row),
    address_check: storedAddressCheck(row),
    fulfillment_photos: await signedPhotos(deps, photos),
    human_review: humanReview(deps, row),
    package_id: row.package_id,
    inbound_capture_id: row.inbound_capture_id,
    postal_mail_thread_id: row.postal_mail_thread_id,
    mail_run_id: row.mail_run_id,
    a2a_task_id: row.a2a_task_id ?? null,
    agent_notes: row.agent_notes,
    metadata: row.metadata,
    test_mode: row.test_mode,
  };
}

export type MailRecord = Awaited<ReturnType<typeof toMailRecord>>;

/**
 * The mail.* webhook payload (Events / Outbound mail events). `status` is the status the
 * event reports, so a late retry of an earlier event still says what happened then.
 */
export async function buildMailEventPayload(
  deps: Deps,
  row: MailRow,
  eventType: string,
  photos: PhotoRow[],
  known?: InstructionsDocument | null,
): Promise<Record<string, unknown>> {
  const status = eventType.replace(/^mail\./, '');
  const instructions = !row.agent_id
    ? null
    : known && known.agent_id === row.agent_id
      ? known
      : await currentInstructions(deps, row.agent_id);
  const withPhotos = status !== 'submitted' && status !== 'pending_approval';
  const mailed = ['mailed', 'delivered'].includes(status) || (status === 'failed' && row.carrier_delivery_failed);
  return {
    event_type: eventType,
    outbound_mail_id: row.id,
    agent_id: row.agent_id,
    mailbox_id: row.agent_id ? mailboxIdFor(row.agent_id) : null,
    package_id: row.package_id,
    recipient_name: row.recipient_name,
    recipient_city: row.recipient_city,
    recipient_state: row.recipient_state,
    recipient_zip: row.recipient_zip,
    return_name: row.return_name,
    return_line1: row.return_line1,
    return_line2: row.return_line2,
    return_city: row.return_city,
    return_state: row.return_state,
    return_zip: row.return_zip,
    mail_class: row.mail_class,
    status,
    tracking_number: mailed ? row.tracking_number : null,
    carrier: mailed ? row.carrier : null,
    cost_cents: row.cost_cents,
    created_at: row.created_at.toISOString(),
    mailed_at: mailed ? iso(row.mailed_at) : null,
    ...(status === 'failed' ? { error_message: row.error_message } : {}),
    ...(status === 'failed'
      ? {
          carrier_delivery_failed: row.carrier_delivery_failed,
          failure_stage: row.failure_stage,
          failure_source: row.failure_source,
        }
      : {}),
    agent_notes: row.agent_notes,
    metadata: row.metadata,
    pdf_url: isPdf(row) ? await signedDocumentUrl(deps, row) : null,
    fulfillment_photos: withPhotos ? await signedPhotos(deps, photos) : [],
    callback_url: `${deps.config.baseUrl}/v1/mail/${row.id}`,
    test_mode: row.test_mode,
    ...(row.test_mode ? { estimated_live_cost_cents: row.price_cents } : {}),
    instructions: {
      text: instructions?.text ?? null,
      version: instructions?.version ?? null,
      hash: instructions?.hash ?? null,
    },
  };
}

/**
 * Publishes mail.<status> for a piece once (event key `mail:<id>:<event_type>`). Call after
 * the change is committed. `photos`: the piece's fulfillment photos when the caller knows
 * them (a new piece has none), else they are loaded.
 */
export async function publishMailEvent(
  deps: Deps,
  row: MailRow,
  eventType: string,
  photos?: PhotoRow[],
  instructions?: InstructionsDocument | null,
): Promise<void> {
  const payload = await buildMailEventPayload(
    deps,
    row,
    eventType,
    photos ?? (await loadPhotos(deps.db, [row.id])).get(row.id) ?? [],
    instructions,
  );
  await publishEvent(deps, {
    eventKey: `mail:${row.id}:${eventType}`,
    memberId: row.member_id,
    agentId: row.agent_id,
    eventType,
    testMode: row.test_mode,
    objectType: 'outbound_mail',
    objectId: row.id,
    payload,
  });
}
