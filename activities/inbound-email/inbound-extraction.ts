// Activities of the inbound extraction workflow: each is one step of
// services/inbound-email/extraction.ts (idempotent), plus the OCR's heartbeats.
import { Context } from '@temporalio/activity';
import type { Deps } from '../../services/shared/deps';
import {
  analyseInboundItem,
  discardUncommittedInbound,
  extractInboundEmailText,
  extractInboundFile,
  failInboundItem,
  finishInboundItem,
  inboundItemCommitted,
  matchInboundThread,
  ocrInboundFile,
  verifyInboundStorage,
} from '../../services/inbound-email/extraction';

export function createInboundExtractionActivities(deps: Deps) {
  return {
    inboundItemCommitted: (input: Parameters<typeof inboundItemCommitted>[1]) => inboundItemCommitted(deps, input),
    discardUncommittedInbound: (input: Parameters<typeof discardUncommittedInbound>[1]) =>
      discardUncommittedInbound(deps, input),
    verifyInboundStorage: (input: Parameters<typeof verifyInboundStorage>[1]) => verifyInboundStorage(deps, input),
    extractInboundEmailText: (input: Parameters<typeof extractInboundEmailText>[1]) =>
      extractInboundEmailText(deps, input),
    extractInboundFile: (input: Parameters<typeof extractInboundFile>[1]) => extractInboundFile(deps, input),
    ocrInboundFile: (fileId: string) => ocrInboundFile(deps, fileId, (page) => Context.current().heartbeat({ page })),
    analyseInboundItem: (input: Parameters<typeof analyseInboundItem>[1]) => analyseInboundItem(deps, input),
    matchInboundThread: (input: Parameters<typeof matchInboundThread>[1]) => matchInboundThread(deps, input),
    finishInboundItem: (input: Parameters<typeof finishInboundItem>[1]) => finishInboundItem(deps, input),
    failInboundItem: (input: Parameters<typeof failInboundItem>[1]) => failInboundItem(deps, input),
  };
}
