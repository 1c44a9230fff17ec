// The scan pipeline of physical inbound, run by the activities of the inbound workflows:
// inbound.received and inbound.scan_available, OCR of each page (services/inbound-email/ocr.ts,
// Tesseract when installed) with the result saved on the page, then the search index,
// the member's webhook rules and inbound.context_ready, and finally the signal to the
// live Open & Scan operation that asked for the scan.
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Deps } from '../shared/deps';
import { ocrPageStatus } from '../../domain/inbound-email/ocr';
import { ocrImage } from '../inbound-email/ocr';
import { MAX_OCR_PAGE_CHARS, ruleOcrStatus, ruleSourceKind } from '../../domain/physical-inbound/agent-inbox';
import { handlingScanOutcomeSignal, handlingWorkflowId } from '../../workflows/physical-inbound/contracts';
import { publishEvent } from '../webhooks/events';
import { emitRuleMatches } from '../webhooks/rules';
import { findItem, ItemRow, recordActivity } from './item-records';
import { bundleOcrStatus, loadItemBundles } from './scan-bundles';
import { refreshSearchFields } from './search-index';
import type { ScanBundleRow, ScanPageRow } from './rows';
import { claimPageForOcr, markOcrAttemptFailed, saveOcrResult } from './scan-rows';
import { sqlRows } from '../shared/sql';

function itemEventPayload(item: ItemRow, ocrStatus: string | null) {
  return { item_id: item.id, agent_id: item.agent_id, source_domain: item.source_domain, ocr_status: ocrStatus };
}

/**
 * inbound.received: the item is recorded. Its ocr_status is that of a scan recorded with
 * the item (sandbox seeds arrive scanned), else null: a received piece is not scanned.
 */
export async function publishInboundReceived(deps: Deps, itemId: string): Promise<void> {
  const item = await findItem(deps.db, itemId);
  if (!item || item.source_domain === 'member_sample') return;
  const bundles = (await loadItemBundles(deps.db, item.id)).filter(
    (b) => b.created_at.getTime() <= item.created_at.getTime(),
  );
  await publishEvent(deps, {
    eventKey: `inbound:${item.id}:inbound.received`,
    memberId: item.member_id,
    agentId: item.agent_id,
    eventType: 'inbound.received',
    testMode: item.environment === 'test',
    objectType: 'inbound_item',
    objectId: item.id,
    payload: itemEventPayload(item, bundles.length ? bundleOcrStatus(bundles[0]) : null),
  });
}

async function bundleWithItem(deps: Deps, bundleId: string) {
  const [row] = await sqlRows<Pick<ScanBundleRow, 'item_id'>>(
    deps.db,
    `SELECT item_id FROM scan_bundles WHERE id = $1`,
    [bundleId],
  );
  if (!row) return null;
  const item = await findItem(deps.db, row.item_id);
  const bundle = (await loadItemBundles(deps.db, row.item_id)).find((b) => b.id === bundleId);
  return item && bundle ? { item, bundle } : null;
}

/**
 * inbound.scan_available: the page images are stored; OCR may be pending. The item's
 * inbound.received goes first (publishing it again is a no-op), so receivers see them in order.
 */
export async function publishScanAvailable(deps: Deps, bundleId: string): Promise<string[]> {
  const found = await bundleWithItem(deps, bundleId);
  if (!found) return [];
  const { item, bundle } = found;
  await publishInboundReceived(deps, item.id);
  await publishEvent(deps, {
    eventKey: `inbound:${bundle.id}:inbound.scan_available`,
    memberId: item.member_id,
    agentId: item.agent_id,
    eventType: 'inbound.scan_available',
    testMode: item.environment === 'test',
    objectType: 'inbound_item',
    objectId: item.id,
    payload: itemEventPayload(item, bundleOcrStatus(bundle)),
  });
  return bundle.pages.map((p) => p.id);
}

export const MAX_OCR_ATTEMPTS = 3;

/**
 * OCRs one page (services/inbound-email/ocr.ts) and saves the result: its text (at most 32,000
 * characters), confidence, uncertain spans and status (ready, or needs_review when the
 * confidence is low). Pages already finished (template OCR of fixtures, or a previous
 * attempt) are left as they are. Returns whether another attempt may help.
 */
export async function ocrScanPage(
  deps: Deps,
  pageId: string,
  runner: typeof ocrImage = ocrImage,
): Promise<{ status: string; retry: boolean }> {
  const page = await claimPageForOcr(deps.db, pageId, MAX_OCR_ATTEMPTS);
  if (!page) {
    const [current] = await sqlRows<Pick<ScanPageRow, 'ocr_status'>>(
      deps.db,
      `SELECT ocr_status FROM scan_pages WHERE id = $1`,
      [pageId],
    );
    return { status: current?.ocr_status ?? 'failed', retry: false };
  }
  const image = await deps.storage.get(page.storage_key);
  const result = await runner(deps.config, image, page.content_type === 'image/jpeg' ? 'jpg' : 'png');
  if (result.ok) {
    const text = result.page.text.slice(0, MAX_OCR_PAGE_CHARS);
    const status = ocrPageStatus(result.page);
    await saveOcrResult(deps.db, pageId, {
      status,
      text,
      isBlank: text.trim() === '',
      confidence: result.page.words ? result.page.confidence : null,
      uncertainSpans: result.page.uncertainSpans,
      model: result.model,
    });
    return { status, retry: false };
  }
  const retry = result.retryable && page.ocr_attempts < MAX_OCR_ATTEMPTS;
  await markOcrAttemptFailed(deps.db, pageId, retry ? 'queued' : 'failed', result.errorCode);
  return { status: retry ? 'queued' : 'failed', retry };
}

/**
 * Once every page has its OCR: refreshes the search index, evaluates the member's
 * webhook rules on the saved text, and publishes inbound.context_ready.
 */
export async function finishScanBundle(deps: Deps, bundleId: string): Promise<string | null> {
  const found = await bundleWithItem(deps, bundleId);
  if (!found) return null;
  const { item, bundle } = found;
  await refreshSearchFields(deps.db, item.id);
  const status = bundleOcrStatus(bundle);
  await emitRuleMatches(deps, {
    memberId: item.member_id,
    agentId: item.agent_id,
    itemId: item.id,
    environment: item.environment,
    sourceDomain: item.source_domain,
    pages: bundle.pages.map((p) => ({
      pageId: p.id,
      sourceKind: ruleSourceKind({ role: p.page_role, origin: p.origin }),
      ocrStatus: ruleOcrStatus(p.ocr_status, p.ocr_text),
      text: p.ocr_text,
    })),
  });
  await recordActivity(deps.db, item, 'ocr_saved', { bundle_id: bundle.id, ocr_status: status });
  await publishEvent(deps, {
    eventKey: `inbound:${bundle.id}:inbound.context_ready`,
    memberId: item.member_id,
    agentId: item.agent_id,
    eventType: 'inbound.context_ready',
    testMode: item.environment === 'test',
    objectType: 'inbound_item',
    objectId: item.id,
    payload: itemEventPayload(item, status),
  });
  return status;
}

/**
 * Once a bundle's context is saved (inbound.context_ready published): tells the live Open
 * & Scan operation that asked for the scan, so it completes only now. Returns whether an
 * operation was told; a closed or finished operation needs nothing.
 */
export async function reportScanBundleOutcome(deps: Deps, bundleId: string): Promise<boolean> {
  const [row] = await sqlRows<{ request_id: string; handling_id: string }>(
    deps.db,
    `SELECT r.id AS request_id, r.handling_id FROM scan_bundles b JOIN scan_requests r ON r.id = b.request_id
       JOIN handling_operations o ON o.id = r.handling_id
      WHERE b.id = $1 AND o.environment = 'live' AND o.status = 'accepted'`,
    [bundleId],
  );
  if (!row) return false;
  try {
    await deps.temporal.workflow.getHandle(handlingWorkflowId(row.handling_id)).signal(handlingScanOutcomeSignal, {
      scanRequestId: row.request_id,
      outcome: 'fulfilled',
      bundleId,
      reason: null,
    });
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
  return true;
}
