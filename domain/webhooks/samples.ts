// Sample payloads for test deliveries: the shape a receiver will get for a real event of
// that type, with made-up values and `sample: true` so handlers can tell. Pure.
import { BATCH_EVENT_TYPES, INBOUND_EVENT_TYPES, MAIL_EVENT_TYPES, TEST_EVENT_TYPE } from './events';

export interface SampleContext {
  /** A fresh uuid for the sample object. */
  objectId: string;
  agentId: string | null;
  testMode: boolean;
  now: Date;
  baseUrl: string;
  endpointId?: string;
  rule?: { id: string; name: string };
}

export const SAMPLE_EVENT_TYPES: readonly string[] = [
  ...MAIL_EVENT_TYPES,
  ...BATCH_EVENT_TYPES,
  ...INBOUND_EVENT_TYPES,
];

export function pingPayload(ctx: SampleContext): Record<string, unknown> {
  return {
    event_type: TEST_EVENT_TYPE,
    sample: true,
    message: 'Test delivery from the Postal Mail API. Answer 2xx within 10 seconds.',
    agent_id: ctx.agentId,
    ...(ctx.endpointId ? { endpoint_id: ctx.endpointId } : {}),
    test_mode: ctx.testMode,
    created_at: ctx.now.toISOString(),
  };
}

export function samplePayload(eventType: string, ctx: SampleContext): Record<string, unknown> {
  const created = ctx.now.toISOString();
  if (eventType.startsWith('mail.')) {
    const status = eventType.slice('mail.'.length);
    const mailed = status === 'mailed' || status === 'delivered';
    return {
      event_type: eventType,
      sample: true,
      outbound_mail_id: ctx.objectId,
      agent_id: ctx.agentId,
      mailbox_id: null,
      package_id: null,
      recipient_name: 'Sample Recipient',
      recipient_city: 'Austin',
      recipient_state: 'TX',
      recipient_zip: '78701',
      return_name: 'Sample Sender',
      return_line1: '1 Sample Way',
      return_line2: null,
      return_city: 'Austin',
      return_state: 'TX',
      return_zip: '78701',
      mail_class: 'first_class',
      status,
      tracking_number: mailed ? 'SAMPLE0000000000' : null,
      carrier: mailed ? 'usps' : null,
      cost_cents: ctx.testMode ? 0 : 290,
      created_at: created,
      mailed_at: mailed ? created : null,
      ...(status === 'failed' ? { error_message: 'Sample failure message' } : {}),
      agent_notes: null,
      metadata: null,
      pdf_url: null,
      fulfillment_photos: [],
      callback_url: `${ctx.baseUrl}/v1/mail/${ctx.objectId}`,
      test_mode: ctx.testMode,
      ...(ctx.testMode ? { estimated_live_cost_cents: 290 } : {}),
      instructions: { text: null, version: null, hash: null },
    };
  }
  if (eventType.startsWith('batch.')) {
    const status = eventType.slice('batch.'.length);
    const done = status === 'completed' || status === 'partially_completed';
    return {
      event_type: eventType,
      sample: true,
      batch_job_id: ctx.objectId,
      job_name: 'Sample batch',
      mail_type: 'postcard_4x6',
      mailing_class: 'first_class',
      total_pieces: 10,
      pieces_mailed: status === 'completed' ? 10 : status === 'partially_completed' ? 8 : 0,
      pieces_failed: status === 'partially_completed' ? 2 : 0,
      total_cents: ctx.testMode ? 0 : 280,
      status,
      error_message: status === 'failed' ? 'Sample failure message' : null,
      created_at: created,
      completed_at: done || status === 'cancelled' || status === 'failed' ? created : null,
    };
  }
  // Inbound events carry identifiers only.
  return {
    sample: true,
    item_id: ctx.objectId,
    agent_id: ctx.agentId,
    source_domain: 'member_sample',
    ocr_status: eventType === 'inbound.received' || eventType === 'inbound.scan_available' ? 'pending' : 'ready',
    ...(eventType === 'inbound.rule_matched'
      ? {
          rule_id: ctx.rule?.id ?? null,
          rule_name: ctx.rule?.name ?? 'Sample rule',
          endpoint_id: ctx.endpointId ?? null,
        }
      : {}),
  };
}
