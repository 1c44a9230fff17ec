// Workflows of physical inbound: one per handling operation (`handling-<id>`), one per
// received item (`inbound-item-<id>`) and one per scan bundle (`inbound-scan-<id>`).
// Updates answer the owner and the facility synchronously; scan outcomes are signals.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { HandlingActionType, HandlingStatus } from '../../domain/workflow-safe/handling';

export const handlingWorkflowId = (operationId: string) => `handling-${operationId}`;
export const inboundReceivedWorkflowId = (itemId: string) => `inbound-item-${itemId}`;
export const scanBundleWorkflowId = (bundleId: string) => `inbound-scan-${bundleId}`;

/** ApplicationFailure types the API maps to HTTP answers. */
export const HANDLING_FAILURES = {
  staleVersion: 'HANDLING_VERSION_STALE',
  invalidState: 'HANDLING_STATE_INVALID',
  invalid: 'HANDLING_INVALID',
  insufficientCredits: 'INSUFFICIENT_CREDITS',
} as const;

export interface HandlingSnapshot {
  id: string;
  status: HandlingStatus;
  version: number;
}

export interface HandlingWorkflowInput {
  operationId: string;
  itemId: string;
  memberId: string;
  agentId: string | null;
  testMode: boolean;
  actionType: HandlingActionType;
  status: HandlingStatus;
  version: number;
  /** How long the owner has to decide before the proposal is rejected as expired. */
  approvalTimeoutMs: number;
}

export interface ApproveHandlingArgs {
  expectedVersion: number;
  destructiveConfirmed: boolean;
}

export interface RejectHandlingArgs {
  expectedVersion: number;
  actor: 'member' | 'facility' | 'system';
  reason: string;
}

export interface AcceptHandlingArgs {
  expectedVersion: number;
  attestation: string | null;
}

export interface CompleteHandlingArgs {
  expectedVersion: number;
  trackingNumber: string | null;
  attestation: string | null;
}

export interface ScanOutcome {
  scanRequestId: string;
  outcome: 'fulfilled' | 'rejected';
  bundleId: string | null;
  reason: string | null;
}

export const approveHandlingUpdate = defineUpdate<HandlingSnapshot, [ApproveHandlingArgs]>('approveHandling');
export const rejectHandlingUpdate = defineUpdate<HandlingSnapshot, [RejectHandlingArgs]>('rejectHandling');
export const acceptHandlingUpdate = defineUpdate<HandlingSnapshot, [AcceptHandlingArgs]>('acceptHandling');
export const completeHandlingUpdate = defineUpdate<HandlingSnapshot, [CompleteHandlingArgs]>('completeHandling');
export const handlingScanOutcomeSignal = defineSignal<[ScanOutcome]>('handlingScanOutcome');
export const handlingStateQuery = defineQuery<HandlingSnapshot>('handlingState');

export interface InboundReceivedWorkflowInput {
  itemId: string;
  memberId: string;
  agentId: string | null;
  testMode: boolean;
}

export interface ScanBundleWorkflowInput {
  bundleId: string;
  itemId: string;
  memberId: string;
  agentId: string | null;
  testMode: boolean;
}

export interface PhysicalInboundReconcileInput {
  /** Only records committed at least this long ago are started (younger ones may still be starting). */
  graceSeconds: number;
}
