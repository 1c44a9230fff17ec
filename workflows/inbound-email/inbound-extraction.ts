// One workflow per forwarded inbound mail item (`inbound-extraction-<itemId>`): waits for
// the intake's commit, verifies the stored objects (captured -> stored), extracts text
// from the email and from each attachment (PDF text and metadata, DOCX text, OCR of
// images and scanned PDFs), analyses the texts into the drafting context, links the item
// to a postal thread, and settles the item as extracted or needs_review (or failed).
// Each step is an idempotent activity; a file whose extraction fails is marked failed
// and the item goes to review rather than stopping the rest.
import { ApplicationFailure, proxyActivities, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import type { createInboundExtractionActivities } from '../../activities/inbound-email/inbound-extraction';
import type { InboundExtractionInput, InboundExtractionResult } from './contracts';
import { ObjectStatus } from '../shared/search-attributes';
import { INBOUND_EXTRACTION, INBOUND_OCR } from '../shared/activity-options';

type InboundActivities = ReturnType<typeof createInboundExtractionActivities>;

const acts = proxyActivities<InboundActivities>(INBOUND_EXTRACTION);

const ocr = proxyActivities<InboundActivities>(INBOUND_OCR);

export async function inboundExtractionWorkflow(input: InboundExtractionInput): Promise<InboundExtractionResult> {
  const { itemId } = input;
  const setStatus = (status: string) => upsertSearchAttributes([{ key: ObjectStatus, value: status }]);

  let committed = false;
  for (let attempt = 0; attempt < input.commitWait.attempts; attempt++) {
    committed = await acts.inboundItemCommitted(itemId);
    if (committed) break;
    if (attempt + 1 < input.commitWait.attempts) {
      await sleep(Math.min(input.commitWait.initialIntervalMs * 2 ** attempt, input.commitWait.maxIntervalMs));
    }
  }
  if (!committed) {
    await acts.discardUncommittedInbound({ itemId, storageKeys: input.storageKeys });
    setStatus('abandoned');
    return { status: 'abandoned' };
  }

  try {
    const stored = await acts.verifyInboundStorage(itemId);
    setStatus(stored.status);
    if (stored.status === 'failed') return { status: 'failed' };

    await acts.extractInboundEmailText(itemId);
    for (const fileId of stored.attachmentIds) {
      const result = await acts.extractInboundFile(fileId);
      if (result.extractionStatus === 'pending_ocr') await ocr.ocrInboundFile(fileId);
    }
    const analysis = await acts.analyseInboundItem(itemId);
    await acts.matchInboundThread({ itemId, ...analysis });
    const final = await acts.finishInboundItem(itemId);
    setStatus(final.status);
    return { status: final.status };
  } catch (err) {
    const reason =
      err instanceof Error ? (err.cause instanceof ApplicationFailure ? err.cause.message : err.message) : String(err);
    await acts.failInboundItem({ itemId, reason });
    setStatus('failed');
    return { status: 'failed' };
  }
}
