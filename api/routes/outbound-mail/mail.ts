// Outbound mail: submit (multipart, with dry run and safeguards), list, read, cancel,
// owner approval, the stored document, usage, and the sandbox's test pieces.
import { readFile, rm } from 'node:fs/promises';
import { z } from 'zod';
import { defineRoute, RouteDef, UploadedFile } from '../../route';
import { IdParams, PG_INT_MAX, textInt, WORKFLOW_UNAVAILABLE_RESPONSE, TestMode } from '../../schemas/common';
import { IDEMPOTENCY_KEY_HEADER, idempotentRoute } from '../../idempotent';
import { parseOrThrow } from '../../router';
import {
  ApproveResultSchema,
  CancelResultSchema,
  DryRunSchema,
  ListMailQuery,
  MailListSchema,
  MailRecordSchema,
  RejectResultSchema,
  SubmitMailForm,
  SubmitMailQuery,
  SubmittedMailSchema,
  TestMailBody,
  UsageQuery,
  UsageSchema,
} from './mail.schemas';
import { errors } from '../../../domain/shared/errors';
import { hiddenCharacterProblem } from '../../../domain/workflow-safe/visible-text';
import { ACCEPTED_FORMATS } from '../../../domain/outbound-mail/documents';
import { submitAndAnswer, templateDocument } from './submit-answer';
import { getMail, listMail, mailDocumentUrl } from '../../../services/outbound-mail/read';
import { cancelMail } from '../../../services/outbound-mail/cancel';
import { approveMail, rejectMail } from '../../../services/outbound-mail/approval';
import { advanceTestMail } from '../../../services/outbound-mail/sandbox-advance';
import { getUsage } from '../../../services/billing/usage';
import { SIGNED_URL_SECONDS } from '../../../services/shared/storage';
import { getDryRunProof } from '../../../services/outbound-mail/print-proofs';
import type { InstructionsDocument } from '../../../services/accounts/instructions';
import { contentDisposition } from '../../../domain/shared/downloads';
import { requestFingerprint, runIdempotent } from '../../../services/shared/idempotency';

export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

/** Reads an uploaded file and removes its temporary copy, if it has one. */
export async function readUpload(file: UploadedFile): Promise<Buffer> {
  if (file.data !== undefined) return file.data;
  try {
    return await readFile(file.filepath);
  } finally {
    await rm(file.filepath, { force: true }).catch(() => undefined);
  }
}

/** X-Max-Cost-Cents: the cap is stored with the piece (a Postgres integer); larger values were a 500 on insert. */
const MaxCostCents = textInt(0, PG_INT_MAX);

function maxCostHeader(value: string | undefined): number | null {
  if (value === undefined || value.trim() === '') return null;
  return parseOrThrow(MaxCostCents, value, 'headers.x-max-cost-cents');
}

/** A dry run's proof link token (domain/outbound-mail/dry-run-proof-links.ts). */
const DryRunProofParams = z.object({ token: z.string().min(1).max(4096) });

const errorResponses = {
  400: { description: 'Validation failed (fields[]) or X-Service-MD-Version missing' },
  404: { description: 'Not found' },
};

const SUBMIT_HEADERS = {
  'X-Service-MD-Version': 'Agent keys: the current instructions version (400 if missing, 409 if stale).',
  'X-Max-Cost-Cents': {
    description: 'Optional cost cap in cents: a piece that costs more is refused with 422 before anything is spent.',
    schema: MaxCostCents,
  },
  'Idempotency-Key':
    'Optional: a retry with the same key and body returns the first answer; the same key with another body is refused (422).',
};

export const routes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/v1/mail',
    summary: 'Send a letter (or price it with dry_run)',
    description:
      'Multipart: the `document` file (PDF, DOCX, JPG, PNG, TXT, CSV, HTML or Markdown, at most 10 MB) and the recipient. ' +
      'HTML (.html, .htm or text/html) and Markdown (.md or text/markdown; raw HTML in it is shown as text) are at most 2 MB and are rendered to a US Letter PDF by ' +
      'headless Chromium with JavaScript off and no network (only data: URIs load; at most 60 pages and 20 s); a DOCX is laid out to a PDF by LibreOffice. ' +
      'That PDF is the document from then on: page_count, price, proof, pdf_url and what the facility prints; a document that cannot be laid out is a 400 ' +
      'on document (details.render_refusal: too_large, too_many_pages, timeout, navigation, crashed or unreadable) and nothing is stored or charged. Checks run in this order and each ' +
      'refuses before anything is stored or spent: fields (400), document (400), X-Max-Cost-Cents, per-transaction limit, daily spend cap ' +
      '(422), max_daily_pieces (422), duplicate protection (409 DUPLICATE_OUTBOUND_MAIL with details.existing_outbound_mail_id), credits (402). ' +
      'dry_run=true answers 200 with the price and warnings and stores nothing. A created piece answers 201 with the outbound mail record: ' +
      'status submitted (debited now; test keys are never charged) or pending_approval (requires_approval=true or a force_approval key; debited on approval). ' +
      'Duplicate protection: the same member, agent, normalised recipient address, document bytes (SHA-256), mail_class and environment within 24 hours, ' +
      'unless that piece was cancelled or failed. A new Idempotency-Key or different metadata does not make a letter new; send allow_duplicate=true ' +
      'to mail the same letter again on purpose. Member keys send from ?agent_id= (or their only agent). ' +
      'Extensions: every dry run and piece carries address_check (the offline check of the US recipient address; advice, the piece prints as sent), ' +
      'and strict_address=true refuses a doubtful address with 400 (fields[] naming the recipient fields) before anything is stored or spent; ' +
      'a dry run also answers proof_url, the print proof (address page and document as they print), signed for 1 hour. ' +
      'Names, address and return lines and the document file name are single lines that print as they read: line breaks, tabs, ' +
      'control characters and invisible formatting characters (bidi overrides and isolates, zero-width characters, the soft hyphen, ' +
      'tag characters: Unicode category Cf, but joiners inside a word) are refused with 400 naming the field and the character; ' +
      'agent_notes may hold line breaks but nothing hidden. ' +
      'Extension: instead of document, template_id (optional template_version) and merge_variables (a JSON string field) send a letter merged ' +
      'from one of your templates and rendered like an HTML letter; a variable the template uses and merge_variables does not give is a 400 ' +
      'with one fields[] entry per name (merge_variables.<name>) before anything is priced, stored or charged.',
    tags: ['Outbound mail'],
    query: SubmitMailQuery,
    body: SubmitMailForm,
    multipart: { maxFileBytes: { document: MAX_DOCUMENT_BYTES } },
    requestHeaders: SUBMIT_HEADERS,
    responses: {
      200: { description: 'Dry run: price and warnings; nothing stored or charged', schema: DryRunSchema },
      201: { description: 'The piece was created (submitted or pending_approval)', schema: SubmittedMailSchema },
      ...errorResponses,
      402: {
        description:
          'INSUFFICIENT_CREDITS (billing_url, credits_required_cents, credit_balance_cents, credit_shortfall_cents)',
      },
      409: { description: 'SERVICE_MD_VERSION_MISMATCH or DUPLICATE_OUTBOUND_MAIL' },
      422: {
        description:
          'MAX_COST_EXCEEDED, PER_TRANSACTION_LIMIT_EXCEEDED, DAILY_SPEND_LIMIT_EXCEEDED, MAX_DAILY_PIECES_EXCEEDED, IDEMPOTENCY_KEY_REUSED; nothing spent',
      },
      503: {
        description:
          'Document store, duplicate or idempotency protection unavailable, or the letter renderer busy (RENDERER_BUSY) or unavailable (RENDERER_UNAVAILABLE); retryable, nothing spent',
      },
    },
    handler: async ({ deps, auth, query, body, files, headers, ctx }) => {
      const file = files.document;
      const merged = templateDocument(body, file !== undefined);
      if (merged.document)
        return submitAndAnswer(
          deps,
          auth,
          {
            fields: merged.fields,
            document: merged.document,
            agentId: query.agent_id,
            maxCostCents: maxCostHeader(headers['x-max-cost-cents']),
            idempotencyKey: headers['idempotency-key'],
          },
          'POST /v1/mail',
        );
      if (!file)
        throw errors.validation([
          { path: 'document', message: `required: a ${ACCEPTED_FORMATS} file (or template_id with merge_variables)` },
        ]);
      const data = await readUpload(file);
      // The file name is shown to the owner beside the pages: it may not hide what it is (decision 0110).
      const nameProblem = file.originalFilename && hiddenCharacterProblem(file.originalFilename, 'single_line');
      if (nameProblem) throw errors.validation([{ path: 'document', message: `the file name ${nameProblem}` }]);
      return submitAndAnswer(
        deps,
        auth,
        {
          fields: merged.fields,
          document: { data, filename: file.originalFilename, contentType: file.mimetype },
          agentId: query.agent_id,
          maxCostCents: maxCostHeader(headers['x-max-cost-cents']),
          idempotencyKey: headers['idempotency-key'],
          instructions: (ctx.state.instructions as InstructionsDocument | null | undefined) ?? undefined,
        },
        'POST /v1/mail',
      );
    },
  }),

  defineRoute({
    method: 'get',
    path: '/v1/mail',
    summary: 'List outbound mail',
    description:
      'Newest first. q matches recipient name and company, address lines, city, state, ZIP, tracking number and agent notes (every word must match). ' +
      'created_after and created_before take an ISO 8601 date-time or YYYY-MM-DD (inclusive; a date-only created_before includes that whole UTC day). ' +
      "test_mode defaults to the key's environment. Agent keys see only their agent's mail; member keys may narrow with agent_id.",
    tags: ['Outbound mail'],
    query: ListMailQuery,
    responses: { 200: { description: 'A page of records', schema: MailListSchema }, ...errorResponses },
    handler: async ({ deps, auth, query }) => ({ body: await listMail(deps, auth, query) }),
  }),

  defineRoute({
    method: 'get',
    path: '/v1/mail/:id',
    summary: 'Read one outbound piece',
    description:
      'The canonical record with fresh 1-hour signed URLs for pdf_url, proof_url (the print proof, once rendered) and fulfillment_photos.',
    tags: ['Outbound mail'],
    params: IdParams,
    responses: { 200: { description: 'The record', schema: MailRecordSchema }, ...errorResponses },
    handler: async ({ deps, auth, params }) => ({ body: await getMail(deps, auth, params.id) }),
  }),

  defineRoute({
    method: 'get',
    path: '/v1/mail/:id/document',
    summary: 'The stored document (document_preview_url)',
    description: 'Redirects (302) to a fresh signed URL of the stored document, valid for 1 hour.',
    tags: ['Outbound mail'],
    params: IdParams,
    responses: {
      302: {
        description: 'Location: the signed document URL',
        schema: z.object({ ...TestMode, url: z.string(), expires_in_seconds: z.number().int() }),
      },
      ...errorResponses,
    },
    handler: async ({ deps, auth, params }) => {
      const url = await mailDocumentUrl(deps, auth, params.id);
      return { status: 302, headers: { Location: url }, body: { url, expires_in_seconds: SIGNED_URL_SECONDS } };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/v1/mail/dry-run-proofs/:token',
    summary: "A dry run's print proof (its proof_url)",
    description:
      'The PDF a dry run priced, as the facility would print it. The signed link (1 hour) is the credential: no key. ' +
      'The first GET renders the proof, later ones read it; a dry run itself renders nothing.',
    tags: ['Outbound mail'],
    params: DryRunProofParams,
    responses: {
      200: { description: 'The proof (application/pdf, inline proof.pdf)', file: true },
      404: {
        description:
          "PROOF_URL_INVALID (reason url_invalid): not a link this service signed; PROOF_NO_LONGER_AVAILABLE (reason url_expired): the proof's document is no longer kept",
      },
      410: { description: 'PROOF_URL_EXPIRED (reason url_expired): the link is past its hour; send the dry run again' },
      503: {
        description: 'PROOF_UNAVAILABLE: the proof could not be rendered right now; STORAGE_UNAVAILABLE (retryable)',
      },
    },
    handler: async ({ deps, params }) => ({
      body: await getDryRunProof(deps, params.token),
      headers: {
        'Content-Type': 'application/pdf',
        'Content-Disposition': contentDisposition('proof.pdf', { type: 'inline', fallbackName: 'proof.pdf' }),
        'Cache-Control': 'private, max-age=3600',
      },
    }),
  }),

  defineRoute({
    method: 'delete',
    path: '/v1/mail/:id',
    summary: 'Cancel a piece',
    description:
      'Cancels a piece that is submitted and not yet printing (or still awaiting approval) and refunds its credits once. Repeating the call ' +
      'answers already_cancelled true and refunds nothing. 409 MAIL_NOT_CANCELLABLE once printing has started or later.',
    tags: ['Outbound mail'],
    params: IdParams,
    responses: {
      200: { description: 'Cancelled (or already cancelled)', schema: CancelResultSchema },
      ...errorResponses,
      409: { description: 'MAIL_NOT_CANCELLABLE' },
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    requestHeaders: IDEMPOTENCY_KEY_HEADER,
    handler: (args) =>
      idempotentRoute(args, 'DELETE /v1/mail/:id', async (key) => ({
        body: await cancelMail(args.deps, args.auth, args.params.id, { idempotencyKey: key }),
      })),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/mail/:id/approve',
    summary: 'Approve a piece awaiting approval (account owner)',
    description:
      'Debits the piece now and submits it. 402 when credits are short: the piece stays pending_approval, so add credits and approve again.',
    tags: ['Outbound mail'],
    params: IdParams,
    responses: {
      200: { description: 'Approved and submitted', schema: ApproveResultSchema },
      ...errorResponses,
      402: { description: 'INSUFFICIENT_CREDITS; the piece stays pending_approval' },
      409: { description: 'MAIL_NOT_PENDING_APPROVAL' },
      422: { description: 'PER_TRANSACTION_LIMIT_EXCEEDED or DAILY_SPEND_LIMIT_EXCEEDED' },
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    requestHeaders: IDEMPOTENCY_KEY_HEADER,
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/mail/:id/approve', async (key) => ({
        body: await approveMail(args.deps, args.auth, args.params.id, { idempotencyKey: key }),
      })),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/mail/:id/reject',
    summary: 'Reject a piece awaiting approval (account owner)',
    description: 'The piece is cancelled (cancellation_reason rejected_by_owner); nothing is charged.',
    tags: ['Outbound mail'],
    params: IdParams,
    responses: {
      200: { description: 'Rejected', schema: RejectResultSchema },
      ...errorResponses,
      409: { description: 'MAIL_NOT_PENDING_APPROVAL' },
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    requestHeaders: IDEMPOTENCY_KEY_HEADER,
    handler: (args) =>
      idempotentRoute(args, 'POST /v1/mail/:id/reject', async (key) => ({
        body: await rejectMail(args.deps, args.auth, args.params.id, { idempotencyKey: key }),
      })),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/test/mail',
    summary: 'Create a sandbox test piece without a document',
    description:
      'Test keys only. The document is a simulated PDF letter of page_count pages (1-100, default 1), or (extension) template_id with merge_variables: ' +
      'a letter merged from your template and rendered as in POST /v1/mail; every other field and safeguard is as in POST /v1/mail. Never charged, never printed.',
    tags: ['Sandbox'],
    body: TestMailBody,
    requestHeaders: {
      'X-Service-MD-Version': SUBMIT_HEADERS['X-Service-MD-Version'],
      'X-Max-Cost-Cents': SUBMIT_HEADERS['X-Max-Cost-Cents'],
      'Idempotency-Key': SUBMIT_HEADERS['Idempotency-Key'],
    },
    query: SubmitMailQuery,
    responses: {
      201: { description: 'The test piece', schema: SubmittedMailSchema },
      ...errorResponses,
      409: { description: 'DUPLICATE_OUTBOUND_MAIL or SERVICE_MD_VERSION_MISMATCH' },
      422: { description: 'A safeguard refused the piece' },
    },
    handler: async ({ deps, auth, query, body, headers }) => {
      const { page_count: pages, ...rest } = body;
      const { document, fields } = templateDocument(rest, false);
      return submitAndAnswer(
        deps,
        auth,
        {
          fields: { ...fields, dry_run: false },
          document: document ?? { simulatedPages: pages ?? 1 },
          agentId: query.agent_id,
          maxCostCents: maxCostHeader(headers['x-max-cost-cents']),
          idempotencyKey: headers['idempotency-key'],
        },
        'POST /v1/test/mail',
      );
    },
  }),

  defineRoute({
    method: 'post',
    path: '/v1/test/mail/:id/advance',
    summary: 'Advance a sandbox piece one step',
    description:
      'Test keys only. submitted -> ready (simulated page and envelope photos) -> mailed (carrier, dispatch method, receipt photo, tracking number ' +
      'for tracked classes) -> delivered (delivery photo), through the same workflow steps a facility uses, emitting the matching mail.* event. ' +
      '409 MAIL_STATE_CONFLICT for a piece awaiting approval or already final. Each call is one more step, so a client that retries ' +
      'an advance whose answer it lost should send an Idempotency-Key: the retry then replays the first answer instead of moving again.',
    tags: ['Sandbox'],
    params: IdParams,
    requestHeaders: { 'Idempotency-Key': 'Retries with the same key replay the first answer (the piece moves once)' },
    responses: {
      200: { description: 'The record after the step', schema: MailRecordSchema },
      ...errorResponses,
      409: { description: 'MAIL_STATE_CONFLICT' },
      ...WORKFLOW_UNAVAILABLE_RESPONSE,
    },
    handler: async ({ deps, auth, params, headers }) => {
      const result = await runIdempotent(
        deps,
        auth,
        {
          operation: 'mail.test_advance',
          key: headers['idempotency-key'],
          fingerprint: requestFingerprint({ id: params.id }),
        },
        async () => ({
          status: 200,
          body: await advanceTestMail(deps, auth, params.id, { idempotencyKey: headers['idempotency-key'] }),
        }),
      );
      return { status: result.status, body: result.body, headers: result.headers };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/v1/usage',
    summary: 'Usage and spend for a period',
    description:
      'period_start and period_end (ISO 8601 date-times) default to the current calendar month (UTC) up to now. Returns pieces by status, ' +
      "spend and refunds, the balance, and the ledger movements of the period (newest first, at most 1,000). Agent keys see their own agent's " +
      "pieces and money only; test mode (the key's environment by default) counts sandbox pieces and has no ledger movements.",
    tags: ['Billing'],
    query: UsageQuery,
    responses: { 200: { description: 'Usage', schema: UsageSchema }, ...errorResponses },
    handler: async ({ deps, auth, query }) => ({ body: await getUsage(deps, auth, query) }),
  }),
];
