// Merged batches (extension; docs/decisions/0143-merged-batches-render-per-row.md): a batch
// whose pieces are each rendered from a template (one of the member's merge templates, or an
// HTML template file) with the row's CSV columns as merge variables. The draft is created in
// the status `rendering`: rows without a valid address, or without a value for a variable
// the template uses, are skipped at once as CSV errors are; the batch render workflow
// (workflows/batches/render.ts) then renders the rest in chunks, keeping each row's outcome
// on its recipient row (so a worker that stops continues where it stopped), and at the end
// skips the rows whose render failed or whose pages do not fit the mail type, prices the
// rows that rendered and makes the batch a draft like any other (its batch workflow starts
// then). Nothing is charged before confirm, and confirm charges only the rendered rows.
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { ApiError, errors } from '../../domain/shared/errors';
import { MAX_HTML_BYTES } from '../../domain/outbound-mail/documents';
import { describeAllowance, MARKETING_MAIL_MINIMUM, pageAllowance, priceBatch } from '../../domain/batches/pricing';
import { parseRecipientsCsv, Recipient, SkippedRow } from '../../domain/batches/recipients-csv';
import { checkBatchAddresses } from '../../domain/batches/address-summary';
import { missingVariables, requiredVariables, templateProblem } from '../../domain/templates/merge';
import {
  BatchRecipientRow,
  BatchRow,
  cancelUnrenderedBatch,
  countRenderedRows,
  deleteUnstartedRendering,
  dropSkippedRecipients,
  insertBatchDraft,
  insertMergeRows,
  loadBatchRow,
  saveRenderOutcomes,
  setRenderedDraft,
} from './rows';
import { batchUrl, toBatchObject } from './batch-view';
import { assertMarketingMinimum } from './estimate';
import { BatchServiceOptions, draftExpirySeconds } from './batch-workflow';
import { recordBatchSendAfter } from './scheduled-send';
import { uploadBytes } from '../shared/uploads';
import { templateForMerge } from '../templates/templates';
import { MergedRenderer } from '../templates/merged-render';
import { batchRenderWorkflowId, BatchRenderWorkflowInput } from '../../workflows/batches/contracts';
import type { CreateBatchInput } from './create-input';
import { type Queryable, sqlRows } from '../shared/sql';

export const BATCH_RENDER_WORKFLOW = 'batchRenderWorkflow';
/** Rows one render activity takes; it saves their outcomes every MERGE_SAVE_EVERY rows. */
export const RENDER_ROWS_PER_ACTIVITY = 500;
const MERGE_SAVE_EVERY = 50;

/** An HTML template file (a merged batch without a stored template). */
export function isHtmlTemplateFile(file: { originalFilename: string | null; mimetype: string | null }): boolean {
  return /\.html?$/i.test(file.originalFilename ?? '') || /^text\/html\b/i.test(file.mimetype ?? '');
}

/** The address fields every row offers as variables besides its own columns. */
function addressVariables(r: Pick<Recipient, 'name' | 'line1' | 'line2' | 'city' | 'state' | 'zip'>) {
  return {
    recipient_name: r.name,
    recipient_line1: r.line1,
    recipient_line2: r.line2 ?? '',
    recipient_city: r.city,
    recipient_state: r.state,
    recipient_zip: r.zip,
  };
}

export async function createMergedBatchDraft(
  deps: Deps,
  auth: AuthContext,
  input: CreateBatchInput,
  newId: () => string,
  opts: BatchServiceOptions = {},
) {
  if (!input.recipients)
    throw errors.validation([{ path: 'recipients', message: 'a recipients CSV file is required' }]);
  if (input.template_id !== undefined && input.template)
    throw errors.validation([{ path: 'template_id', message: 'send a template file or template_id, not both' }]);
  // The template: a stored version, or an HTML file checked like a stored one.
  let html: string;
  let template: { id: string; version: number } | null = null;
  if (input.template_id !== undefined) {
    const v = await templateForMerge(deps, auth, input.template_id, input.template_version);
    html = v.html;
    template = { id: input.template_id, version: v.version };
  } else {
    const bytes = await uploadBytes(input.template!);
    if (bytes.length > MAX_HTML_BYTES)
      throw errors.validation([{ path: 'template', message: 'an HTML template may be at most 2 MB' }]);
    html = bytes.toString('utf8').replace(/^\uFEFF/, '');
    const problem = templateProblem(html);
    if (problem) throw errors.validation([{ path: 'template', message: `the template ${problem}` }]);
  }
  const required = requiredVariables(html);

  const csvBytes = await uploadBytes(input.recipients);
  const parsed = parseRecipientsCsv(csvBytes, { columnMap: input.column_map, mergeColumns: true });
  // A row that leaves a variable empty is skipped now, as a CSV error: nothing to render.
  const skipped: SkippedRow[] = [...parsed.skipped_rows];
  const rows: (Recipient & { values: Record<string, string> })[] = [];
  for (const r of parsed.recipients) {
    const values = { ...addressVariables(r), ...r.variables };
    const missing = missingVariables(required, values, { emptyIsMissing: true });
    if (missing.length > 0)
      skipped.push({
        row: r.row,
        field: missing[0],
        value: '',
        error: `no value for merge variable${missing.length === 1 ? '' : 's'} ${missing.join(', ')}`,
      });
    else rows.push({ ...r, values });
  }
  skipped.sort((a, b) => a.row - b.row);
  if (rows.length === 0)
    throw new ApiError(400, 'The recipients CSV has no rows to merge', {
      fields: [{ path: 'recipients', message: `no valid rows: all ${parsed.total_rows} rows were skipped` }],
      retryable: false,
      suggestedAction: 'Fix the rows listed in details.skipped_rows and upload the file again.',
      details: { skipped_rows: skipped.slice(0, 100) },
    });
  assertMarketingMinimum(input.mailing_class, rows.length, 'recipients');
  // A provisional price at the fewest pages the mail type takes; the draft's price follows the rendered pages.
  const provisionalPages = pageAllowance(input.mail_type, input.duplex).min;
  const price = priceBatch({
    mailType: input.mail_type,
    mailingClass: input.mailing_class,
    pieces: rows.length,
    pageCount: provisionalPages,
    color: input.color,
    duplex: input.duplex,
  });

  const id = newId();
  const templateKey = `batches/${id}/template.html`;
  const recipientsKey = `batches/${id}/recipients.csv`;
  await deps.storage.put(templateKey, html, 'text/html; charset=utf-8');
  await deps.storage.put(recipientsKey, csvBytes, 'text/csv');
  const expirySeconds = draftExpirySeconds(deps, opts);
  const row = await deps.db.transaction(async (tx) => {
    await insertBatchDraft(tx, {
      id,
      memberId: auth.memberId!,
      agentId: auth.agentId,
      testMode: auth.testMode,
      jobName: input.job_name,
      mailType: input.mail_type,
      mailingClass: input.mailing_class,
      duplex: input.duplex,
      color: input.color,
      pageCount: provisionalPages,
      templateKey,
      recipientsKey,
      totalRows: parsed.total_rows,
      valid: rows.length,
      skippedRows: skipped,
      price,
      expirySeconds,
      addressCheck: checkBatchAddresses(rows),
      merge: {
        templateId: template?.id ?? null,
        templateVersion: template?.version ?? null,
        rowsToRender: rows.length,
      },
    });
    await insertMergeRows(tx, id, rows);
    await recordBatchSendAfter(tx, id, input.send_after);
    return (await loadBatchRow(tx, id))!;
  });

  try {
    await deps.temporal.workflow.start(BATCH_RENDER_WORKFLOW, {
      taskQueue: deps.config.taskQueue,
      workflowId: batchRenderWorkflowId(id),
      args: [{ batchId: id } satisfies BatchRenderWorkflowInput],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  } catch (err) {
    deps.log.error({ err, batch_id: id }, 'batch render workflow start failed; draft withdrawn');
    await deleteUnstartedRendering(deps.db, id).catch(() => undefined);
    await Promise.all([deps.storage.remove(templateKey), deps.storage.remove(recipientsKey)]).catch(() => undefined);
    throw errors.unavailable(
      'BATCH_WORKFLOW_UNAVAILABLE',
      'The batch could not be scheduled right now; nothing was stored or charged.',
    );
  }
  return {
    batch: toBatchObject(row),
    next_step: {
      action: 'poll',
      url: batchUrl(deps, id),
      hint:
        `Rendering ${rows.length} pieces from the template; the batch becomes a draft by itself (merge.rows_rendered counts up). ` +
        'Rows whose render fails or whose pages do not fit the mail type are then skipped (recipients.skipped_rows) and never charged; confirm the draft after that.',
    },
  };
}

/**
 * Renders the next rows of a merged batch that have no outcome yet (at most
 * RENDER_ROWS_PER_ACTIVITY), saving outcomes every MERGE_SAVE_EVERY rows and calling
 * `progress` after each save. Answers how many rows are still to render (0: done, or the
 * batch is no longer rendering).
 */
export async function renderMergedRows(
  deps: Deps,
  batchId: string,
  progress: (rendered: number) => void,
): Promise<{ remaining: number }> {
  const b = await loadBatchRow(deps.db, batchId);
  if (!b || b.status !== 'rendering') return { remaining: 0 };
  const html = (await deps.storage.get(b.template_key)).toString('utf8');
  const allowance = pageAllowance(b.mail_type, b.duplex);
  const merged = new MergedRenderer(deps.renderers.html);
  const rows = await sqlRows<Pick<BatchRecipientRow, 'seq' | 'source_row' | 'merge_variables'>>(
    deps.db,
    `SELECT seq, source_row, merge_variables FROM batch_recipients
      WHERE batch_id = $1 AND render_status IS NULL ORDER BY seq LIMIT $2`,
    [batchId, RENDER_ROWS_PER_ACTIVITY],
  );
  for (let at = 0; at < rows.length; at += MERGE_SAVE_EVERY) {
    const part = rows.slice(at, at + MERGE_SAVE_EVERY);
    const outcomes = await merged.render(
      html,
      part.map((r) => ({ values: r.merge_variables ?? {} })),
      { maxPagesPerRow: allowance.max, allowance: describeAllowance(b.mail_type, b.duplex), emptyIsMissing: true },
    );
    const saved = await Promise.all(
      outcomes.map(async (o, i) => {
        const r = part[i];
        if (o.ok && o.pageCount < allowance.min)
          return {
            seq: r.seq,
            status: 'skipped',
            pages: o.pageCount,
            key: null,
            reason: `the merged letter has ${o.pageCount} page${o.pageCount === 1 ? '' : 's'}; ${describeAllowance(b.mail_type, b.duplex)}`,
          };
        if (!o.ok) return { seq: r.seq, status: 'skipped', pages: null, key: null, reason: o.reason };
        const key = `batches/${batchId}/pieces/row-${r.source_row}.pdf`;
        await deps.storage.put(key, o.pdf, 'application/pdf');
        return { seq: r.seq, status: 'rendered', pages: o.pageCount, key, reason: null };
      }),
    );
    await saveRenderOutcomes(deps.db, batchId, saved);
    await countRenderedRows(deps.db, batchId);
    const [{ done }] = await sqlRows<{ done: number }>(
      deps.db,
      `SELECT rows_rendered AS done FROM batches WHERE id = $1`,
      [batchId],
    );
    progress(done);
  }
  const [{ remaining }] = await sqlRows<{ remaining: number }>(
    deps.db,
    `SELECT count(*)::int AS remaining FROM batch_recipients WHERE batch_id = $1 AND render_status IS NULL`,
    [batchId],
  );
  return { remaining };
}

/**
 * rendering -> draft: the rows whose render failed are skipped (recipients.skipped_rows,
 * field `template`) and leave the batch, the others are numbered 1..valid again, and the
 * batch is priced at the pages of its longest piece. A batch with no row left (or fewer
 * than marketing mail needs) is cancelled, having cost nothing. Answers the row, for the
 * caller to start its batch workflow when it is a draft.
 */
export async function finishMergedRendering(deps: Deps, batchId: string): Promise<BatchRow | null> {
  return deps.db.transaction(async (tx) => {
    const b = await loadBatchRow(tx, batchId, { lock: true });
    if (!b) return null;
    if (b.status !== 'rendering') return b;
    const failed = await sqlRows<Pick<BatchRecipientRow, 'source_row' | 'skip_reason'>>(
      tx,
      `SELECT source_row, skip_reason FROM batch_recipients WHERE batch_id = $1 AND render_status = 'skipped' ORDER BY seq`,
      [batchId],
    );
    const skippedRows = [
      ...b.skipped_rows,
      ...failed.map((f) => ({
        row: f.source_row,
        field: 'template',
        value: '',
        error: f.skip_reason ?? 'not rendered',
      })),
    ].sort((x, y) => x.row - y.row);
    await dropSkippedRecipients(tx, batchId);
    const [{ valid, pages }] = await sqlRows<{ valid: number; pages: number | null }>(
      tx,
      `SELECT count(*)::int AS valid, max(render_pages)::int AS pages FROM batch_recipients WHERE batch_id = $1`,
      [batchId],
    );
    const tooFew = b.mailing_class === 'marketing_mail' && valid < MARKETING_MAIL_MINIMUM;
    if (valid === 0 || tooFew) {
      await cancelUnrenderedBatch(
        tx,
        batchId,
        { valid, skipped: skippedRows.length, skippedRows },
        valid === 0
          ? 'no row could be rendered; see recipients.skipped_rows'
          : `only ${valid} rows rendered; marketing_mail needs at least ${MARKETING_MAIL_MINIMUM}`,
      );
      return (await loadBatchRow(tx, batchId))!;
    }
    const pageCount = pages ?? pageAllowance(b.mail_type, b.duplex).min;
    const price = priceBatch({
      mailType: b.mail_type,
      mailingClass: b.mailing_class,
      pieces: valid,
      pageCount,
      color: b.color,
      duplex: b.duplex,
    });
    await setRenderedDraft(tx, batchId, { valid, skipped: skippedRows.length, skippedRows }, pageCount, price);
    return (await loadBatchRow(tx, batchId))!;
  });
}
