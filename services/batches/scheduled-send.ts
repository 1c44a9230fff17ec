// Scheduled send for batches (an extension beyond the spec): an optional `send_after` on
// the draft. The batch is priced at draft time and debited on confirm like any other; once
// its pieces are generated (submitted) its workflow holds it from the facility until
// send_after (workflows/batches/batch.ts). This module owns the API's side: storing the
// time with the draft, the workflow input that carries it and the facility's filter.
import { heldFromFacility } from '../../domain/workflow-safe/send-after';
import { checkSendAfter, RELEASED_TO_FACILITY_SQL } from '../outbound-mail/scheduled-send';
import { setBatchSendAfter } from './rows';
import type { Queryable } from '../shared/sql';

export { checkSendAfter, heldFromFacility, RELEASED_TO_FACILITY_SQL };

/** Stores send_after on the draft just inserted (same transaction). */
export async function recordBatchSendAfter(
  tx: Queryable,
  batchId: string,
  sendAfter: string | undefined,
): Promise<void> {
  if (sendAfter !== undefined) await setBatchSendAfter(tx, batchId, new Date(sendAfter));
}

/** The batch workflow's scheduled-send input: the time while the batch has not been released, nothing otherwise. */
export function scheduledBatchInput(row: { send_after?: Date | null; released_to_facility_at?: Date | null }): {
  sendAfter?: string;
} {
  if (!row.send_after || row.released_to_facility_at) return {};
  return { sendAfter: row.send_after.toISOString() };
}
