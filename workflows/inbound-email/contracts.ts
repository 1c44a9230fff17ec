// The extraction workflow of one forwarded inbound mail item, shared by the intake
// (which starts it) and the worker.

export const INBOUND_EXTRACTION_WORKFLOW = 'inboundExtractionWorkflow';

export function inboundExtractionWorkflowId(itemId: string): string {
  return `inbound-extraction-${itemId}`;
}

export interface InboundExtractionInput {
  itemId: string;
  memberId: string;
  agentId: string | null;
  testMode: boolean;
  /**
   * Objects the intake wrote. The workflow is started before the intake's transaction
   * commits; if the item never becomes visible, the workflow deletes these and ends.
   */
  storageKeys: string[];
  /** How long to wait for the intake's commit: checks spaced from initialIntervalMs, doubling up to maxIntervalMs. */
  commitWait: { attempts: number; initialIntervalMs: number; maxIntervalMs: number };
}

export interface InboundExtractionResult {
  status: 'extracted' | 'needs_review' | 'failed' | 'abandoned';
}
