// What an operator sees of a business workflow in the Temporal UI or CLI besides its
// history: search attributes for its status, when it entered that status
// (StatusChangedAt) and the facility's step (FacilityStep, FacilityId), and the
// workflow's current details (a short text of what it waits for now).
import { patched, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import { FacilityId, FacilityStep, MailStatus, StatusChangedAt } from './search-attributes';

/** A Keyword status attribute (MailStatus, BatchStatus, ObjectStatus). */
type StatusKey = typeof MailStatus;

/**
 * Workflows (and history positions) from before these attributes set only the status
 * key, in the same single upsert; new commands (the facility step alone) only where the
 * patch is present.
 */
export const STATUS_ATTRIBUTES_PATCH = 'status-changed-at-attributes';

export interface FacilityView {
  /** e.g. `printing`; null removes it (the facility has nothing to do). */
  step: string | null;
  facilityId?: string | null;
}

function facilityPairs(f: FacilityView | undefined): SearchAttributeUpdatePair[] {
  if (!f) return [];
  const pairs: SearchAttributeUpdatePair[] = [{ key: FacilityStep, value: f.step }];
  if (f.facilityId) pairs.push({ key: FacilityId, value: f.facilityId });
  return pairs;
}

/** The one upsert of a status change: the status key, plus StatusChangedAt and the facility step where patched. */
export function publishStatus(statusKey: StatusKey, status: string, facility?: FacilityView): void {
  const pairs: SearchAttributeUpdatePair[] = [{ key: statusKey, value: status }];
  if (patched(STATUS_ATTRIBUTES_PATCH))
    pairs.push({ key: StatusChangedAt, value: new Date() }, ...facilityPairs(facility));
  upsertSearchAttributes(pairs);
}

/** The facility's step changed within a status (e.g. it claimed a piece for printing). */
export function publishFacilityStep(facility: FacilityView): void {
  if (patched(STATUS_ATTRIBUTES_PATCH)) upsertSearchAttributes(facilityPairs(facility));
}

/** The workflow's current details; a refused cancellation request stays visible below them. */
export function showDetails(lines: string[], refusedCancellation: string | null): void {
  const all = refusedCancellation ? [...lines, '', `**Cancellation request refused:** ${refusedCancellation}`] : lines;
  setCurrentDetails(all.join('\n'));
}
