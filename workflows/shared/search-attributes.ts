// Custom search attributes that every workflow sets, so an operator can filter in the
// Temporal UI (for example `MailStatus = "submitted"`). The dev runner registers them, also
// on a dev server it reuses (docs/operators.md, Operator runbook, has the queries).
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const MailStatus = defineSearchAttributeKey('MailStatus', SearchAttributeType.KEYWORD);
export const BatchStatus = defineSearchAttributeKey('BatchStatus', SearchAttributeType.KEYWORD);
export const ObjectStatus = defineSearchAttributeKey('ObjectStatus', SearchAttributeType.KEYWORD);
export const ObjectId = defineSearchAttributeKey('ObjectId', SearchAttributeType.KEYWORD);
export const AgentId = defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD);
export const MemberId = defineSearchAttributeKey('MemberId', SearchAttributeType.KEYWORD);
export const TestMode = defineSearchAttributeKey('TestMode', SearchAttributeType.BOOL);
/** When the piece, batch, run or handling operation entered its current status (StartTime is only its creation). */
export const StatusChangedAt = defineSearchAttributeKey('StatusChangedAt', SearchAttributeType.DATETIME);
/** The facility's step within a status, e.g. `printing` for a submitted piece the facility has claimed. */
export const FacilityStep = defineSearchAttributeKey('FacilityStep', SearchAttributeType.KEYWORD);
export const FacilityId = defineSearchAttributeKey('FacilityId', SearchAttributeType.KEYWORD);

/** name=type pairs for `temporal server start-dev --search-attribute`. */
export const SEARCH_ATTRIBUTE_REGISTRATIONS: string[] = [
  'MailStatus=Keyword',
  'BatchStatus=Keyword',
  'ObjectStatus=Keyword',
  'ObjectId=Keyword',
  'AgentId=Keyword',
  'MemberId=Keyword',
  'TestMode=Bool',
  'StatusChangedAt=Datetime',
  'FacilityStep=Keyword',
  'FacilityId=Keyword',
];
