// Draft creation from a template PDF and a recipients CSV: every check runs before anything
// is stored, then the files go to the object store, the priced draft and its recipients to
// Postgres in one transaction, and the draft's workflow (which expires it) is started.
import { randomBytes } from 'node:crypto';
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { requestFingerprint } from '../shared/idempotency';
import { sha256Hex } from '../../domain/accounts/keys';
import { ApiError, errors } from '../../domain/shared/errors';
import { formatCents } from '../../domain/shared/money';
import {
  BatchMailingClass,
  BatchMailType,
  BatchPrice,
  describeAllowance,
  priceBatch,
} from '../../domain/batches/pricing';
import {
  ColumnMap,
  parseRecipientsCsv,
  Recipient,
  RECIPIENTS_CSV_MAX_BYTES,
} from '../../domain/batches/recipients-csv';
import { checkBatchAddresses } from '../../domain/batches/address-summary';
import { countPdfPages } from '../../domain/outbound-mail/documents';
import { BatchRow, deleteUnstartedDraft, insertBatchDraft, insertRecipients, loadBatchRow } from './rows';
import type { Queryable } from '../shared/sql';
import { batchUrl, toBatchObject } from './batch-view';
import { assertMarketingMinimum, assertPagesFit } from './estimate';
import {
  BATCH_MAIL_WORKFLOW,
  BatchServiceOptions,
  batchWorkflowInput,
  batchWorkflowStartOptions,
  draftExpirySeconds,
} from './batch-workflow';
import { checkSendAfter, recordBatchSendAfter } from './scheduled-send';
import { UploadedFile, uploadBytes } from '../shared/uploads';
import { createMergedBatchDraft, isHtmlTemplateFile } from './merged';
import type { CreateBatchInput } from './create-input';

export type { CreateBatchInput };

export const TEMPLATE_MAX_BYTES = 10 * 1024 * 1024;
export const TEMPLATE_MAX_PAGES = 200;

export function newBatchId(): string {
  return `bat_${randomBytes(12).toString('hex')}`;
}

/** What makes two create requests "the same" for Idempotency-Key: the fields and both files' bytes. */
export async function batchCreateFingerprint(input: CreateBatchInput): Promise<string> {
  const fileHash = async (f?: UploadedFile) => (f ? sha256Hex(await uploadBytes(f)) : null);
  const { template, recipients, ...fields } = input;
  return requestFingerprint({ fields, template: await fileHash(template), recipients: await fileHash(recipients) });
}

/** Page count of a PDF template, or a 400 naming the template field. */
export async function templatePageCount(bytes: Buffer): Promise<number> {
  const bad = (message: string) => errors.validation([{ path: 'template', message }], `Template refused: ${message}`);
  if (bytes.length === 0) throw bad('the file is empty');
  if (bytes.length > TEMPLATE_MAX_BYTES) throw bad('the template PDF may be at most 10 MB');
  if (!bytes.subarray(0, 1024).toString('latin1').includes('%PDF-')) throw bad('the template must be a PDF');
  // The guarded reader of letter documents: bounded decompression and parse time, and a
  // page-tree walk that refuses loops (pdf-lib alone inflates object-stream bombs and
  // throws on malformed trees).
  try {
    return await countPdfPages(bytes, TEMPLATE_MAX_PAGES);
  } catch (err) {
    if (err instanceof ApiError && err.options.fields?.length) throw bad(err.options.fields[0].message);
    throw err;
  }
}

function nextStepAfterDraft(deps: Deps, r: BatchRow) {
  const pay = r.test_mode
    ? 'nothing is charged in the sandbox'
    : `this charges ${formatCents(r.total_cents)} in credits`;
  return {
    action: 'confirm',
    url: batchUrl(deps, r.id, '/confirm'),
    hint:
      `Check recipients.skipped_rows and pricing, then POST confirm to print ${r.valid} pieces (${pay}). ` +
      `The draft expires at ${r.expires_at.toISOString()}; DELETE cancels it.`,
  };
}

export async function createBatchDraft(
  deps: Deps,
  auth: AuthContext,
  input: CreateBatchInput,
  opts: BatchServiceOptions = {},
) {
  // A merged batch: every row rendered from a template (a stored one, or an HTML file).
  if (input.template_id !== undefined || (input.template && isHtmlTemplateFile(input.template))) {
    checkSendAfter(input.send_after);
    return createMergedBatchDraft(deps, auth, input, newBatchId, opts);
  }
  if (input.template_version !== undefined)
    throw errors.validation([{ path: 'template_version', message: 'only with template_id' }]);
  const missing = [
    ...(input.template ? [] : [{ path: 'template', message: 'a template PDF file is required' }]),
    ...(input.recipients ? [] : [{ path: 'recipients', message: 'a recipients CSV file is required' }]),
  ];
  if (missing.length) throw errors.validation(missing);
  checkSendAfter(input.send_after);
  const template = input.template!;
  const recipientsFile = input.recipients!;

  // Every check runs before anything is stored.
  if (template.size > TEMPLATE_MAX_BYTES)
    throw errors.validation([{ path: 'template', message: 'the template PDF may be at most 10 MB' }]);
  if (recipientsFile.size > RECIPIENTS_CSV_MAX_BYTES)
    throw errors.validation([{ path: 'recipients', message: 'the recipients CSV may be at most 5 MB' }]);
  const templateBytes = await uploadBytes(template);
  const pageCount = await templatePageCount(templateBytes);
  if (pageCount > TEMPLATE_MAX_PAGES) {
    throw errors.badRequest(
      'BATCH_TEMPLATE_PAGES_INVALID',
      `The template has ${pageCount} pages; at most ${TEMPLATE_MAX_PAGES} are accepted.`,
      {
        fields: [{ path: 'template', message: `at most ${TEMPLATE_MAX_PAGES} pages` }],
        suggestedAction: `Upload a template of at most ${TEMPLATE_MAX_PAGES} pages that fits the mail type (${describeAllowance(input.mail_type, input.duplex)}).`,
      },
    );
  }
  assertPagesFit(input.mail_type, input.duplex, pageCount, 'template');

  const csvBytes = await uploadBytes(recipientsFile);
  const parsed = parseRecipientsCsv(csvBytes, { columnMap: input.column_map });
  if (parsed.valid === 0) {
    throw new ApiError(400, 'The recipients CSV has no valid recipients', {
      fields: [{ path: 'recipients', message: `no valid recipients: all ${parsed.total_rows} rows were skipped` }],
      retryable: false,
      suggestedAction: 'Fix the rows listed in details.skipped_rows and upload the file again.',
      details: { skipped_rows: parsed.skipped_rows.slice(0, 100) },
    });
  }
  assertMarketingMinimum(input.mailing_class, parsed.valid, 'recipients');
  const price: BatchPrice = priceBatch({
    mailType: input.mail_type,
    mailingClass: input.mailing_class,
    pieces: parsed.valid,
    pageCount,
    color: input.color,
    duplex: input.duplex,
  });

  // Advice only (extension): every valid row is still printed, at the same price.
  const addressCheck = checkBatchAddresses(parsed.recipients);

  const id = newBatchId();
  const templateKey = `batches/${id}/template.pdf`;
  const recipientsKey = `batches/${id}/recipients.csv`;
  await deps.storage.put(templateKey, templateBytes, 'application/pdf');
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
      pageCount,
      templateKey,
      recipientsKey,
      totalRows: parsed.total_rows,
      valid: parsed.valid,
      skippedRows: parsed.skipped_rows,
      price,
      expirySeconds,
      addressCheck,
    });
    await insertRecipients(tx, id, parsed.recipients);
    await recordBatchSendAfter(tx, id, input.send_after);
    return (await loadBatchRow(tx, id))!;
  });

  try {
    await deps.temporal.workflow.start(BATCH_MAIL_WORKFLOW, {
      ...batchWorkflowStartOptions(deps, batchWorkflowInput(row, expirySeconds)),
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
  } catch (err) {
    // Without its workflow a draft could never expire or be confirmed: take it back.
    deps.log.error({ err, batch_id: id }, 'batch workflow start failed; draft withdrawn');
    await deleteUnstartedDraft(deps.db, id).catch(() => undefined);
    await Promise.all([deps.storage.remove(templateKey), deps.storage.remove(recipientsKey)]).catch(() => undefined);
    throw errors.unavailable(
      'BATCH_WORKFLOW_UNAVAILABLE',
      'The batch could not be scheduled right now; nothing was stored or charged.',
    );
  }

  return { batch: toBatchObject(row), next_step: nextStepAfterDraft(deps, row) };
}
