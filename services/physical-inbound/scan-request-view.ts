// A scan request as the API shows it; pure, so that package actions can show the requests they
// make without importing scan-requests.ts (which reaches them through facility intake).
import type { ItemKind } from '../../domain/physical-inbound/search';
import type { ScanRequestRow } from './rows';

/** The item's columns a facility list adds to each request. */
export type ScanRequestItemColumns = { reference_code: string; kind: ItemKind; mailbox_id: string | null };

export function scanRequestView(r: ScanRequestRow & Partial<ScanRequestItemColumns>) {
  return {
    id: r.id,
    item_id: r.item_id,
    agent_id: r.agent_id,
    scan_type: r.scan_type,
    origin: r.origin,
    package_action_id: r.package_action_id,
    handling_id: r.handling_id,
    options: r.options,
    status: r.status,
    rejection_reason: r.rejection_reason,
    requested_at: r.requested_at.toISOString(),
    fulfilled_at: r.fulfilled_at ? r.fulfilled_at.toISOString() : null,
    ...(r.reference_code ? { item: { reference_code: r.reference_code, kind: r.kind, mailbox_id: r.mailbox_id } } : {}),
  };
}
