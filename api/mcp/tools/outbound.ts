// Outbound tools: send a letter (the document as base64), list, read, cancel, and the
// sandbox's test pieces. A submission keeps its own idempotency record (submit-answer.ts,
// with the key bound to the piece), so the submit tools hand it idempotency_key instead
// of the framework wrapping them.
import { z } from 'zod';
import { errors } from '../../../domain/shared/errors';
import { decodeBase64 } from '../../../domain/support/conversations';
import { getMail, listMail } from '../../../services/outbound-mail/read';
import { cancelMail } from '../../../services/outbound-mail/cancel';
import { advanceTestMail } from '../../../services/outbound-mail/sandbox-advance';
import { MAX_DOCUMENT_BYTES } from '../../routes/outbound-mail/mail';
import { submitAndAnswer, templateDocument } from '../../routes/outbound-mail/submit-answer';
import { ListMailQuery, SubmitMailForm, SubmitMailQuery, TestMailBody } from '../../routes/outbound-mail/mail.schemas';
import { PG_INT_MAX, singleLine, Uuid } from '../../schemas/common';
import { defineTool, RestOutcome } from '../tool';

const MailId = { outbound_mail_id: Uuid.describe('the outbound mail id') };

/** What REST takes as query and header, MCP takes in the input. */
const submitExtras = {
  ...SubmitMailQuery.shape,
  max_cost_cents: z
    .number()
    .int()
    .min(0)
    .max(PG_INT_MAX)
    .optional()
    .describe(
      'cost cap in cents (X-Max-Cost-Cents): a piece that costs more is refused with MAX_COST_EXCEEDED before anything is spent',
    ),
};

/** Query flags are strings over REST ("true"); MCP clients send JSON booleans. */
export const testModeFlag = {
  test_mode: z
    .boolean()
    .optional()
    .describe("member keys: true for sandbox records; defaults to the key's environment"),
};

export const outboundTools = [
  defineTool({
    name: 'send_outbound_mail',
    description:
      'Send a letter: the document as document_base64 (PDF, DOCX, JPG, PNG, TXT, CSV, HTML or Markdown, at most 10 MB) with document_filename, and the recipient address. ' +
      'A document_filename ending .html/.htm or .md makes it an HTML or Markdown letter (at most 2 MB, 60 pages; raw HTML in Markdown shows as text), rendered to a US Letter PDF ' +
      'by headless Chromium with JavaScript off and no network: embed images and fonts as data: URIs. A DOCX is laid out by LibreOffice. The price, page_count and proof follow that PDF; ' +
      'a document that cannot be laid out is refused (document, with details.render_refusal) before anything is charged. ' +
      'dry_run=true prices it and stores nothing; max_cost_cents caps the cost. The result is the outbound mail record (status submitted, or pending_approval); ' +
      'test keys are never charged or printed. Duplicate letters within 24 hours are refused unless allow_duplicate=true. ' +
      'Instead of a document, template_id (optional template_version) with merge_variables (an object) merges one of your templates (list_templates is REST: GET /v1/templates); ' +
      'a variable the template uses and merge_variables lacks is refused (fields merge_variables.<name>) before anything is charged.',
    input: SubmitMailForm.extend({
      document_base64: z
        .string()
        .min(1)
        .optional()
        .describe('the document bytes, base64 (required unless template_id is given)'),
      document_filename: singleLine(z.string().min(1).max(255))
        .optional()
        .describe(
          'file name with extension, e.g. letter.pdf; .html/.htm and .md name HTML and Markdown letters (the extension decides for text, the bytes for everything else)',
        ),
      ...submitExtras,
    }),
    access: 'POST /v1/mail',
    mutation: true,
    idempotency: 'service',
    handler: async (deps, auth, input, call) => {
      const {
        document_base64: base64,
        document_filename: filename,
        agent_id: agentId,
        max_cost_cents: maxCostCents,
        ...rest
      } = input;
      const merged = templateDocument(rest, base64 !== undefined);
      const fields = merged.fields;
      if (merged.document) {
        const r = await submitAndAnswer(
          deps,
          auth,
          { fields, document: merged.document, agentId, maxCostCents, idempotencyKey: call.idempotencyKey },
          call.operation,
        );
        return new RestOutcome(r.status, r.body);
      }
      if (base64 === undefined || filename === undefined)
        throw errors.validation([
          {
            path: base64 === undefined ? 'document_base64' : 'document_filename',
            message: 'required (or template_id with merge_variables)',
          },
        ]);
      const data = decodeBase64(base64);
      if (!data) throw errors.validation([{ path: 'document_base64', message: 'must be base64' }]);
      if (data.length > MAX_DOCUMENT_BYTES)
        throw errors.validation([{ path: 'document_base64', message: 'the document may be at most 10 MB' }]);
      const r = await submitAndAnswer(
        deps,
        auth,
        {
          fields,
          document: { data, filename },
          agentId,
          maxCostCents,
          idempotencyKey: call.idempotencyKey,
        },
        call.operation,
      );
      return new RestOutcome(r.status, r.body);
    },
  }),
  defineTool({
    name: 'list_outbound_mail',
    description:
      'List outbound mail, newest first: q (recipient, address, tracking number, notes), status, created_after/created_before (ISO 8601 or YYYY-MM-DD), limit (max 100), offset.',
    input: ListMailQuery.extend(testModeFlag),
    access: 'GET /v1/mail',
    handler: (deps, auth, input) => listMail(deps, auth, input),
  }),
  defineTool({
    name: 'get_outbound_mail',
    description: 'One outbound mail record with its status, cost breakdown, tracking and fresh signed photo URLs.',
    input: z.object(MailId),
    access: 'GET /v1/mail/:id',
    handler: (deps, auth, input) => getMail(deps, auth, input.outbound_mail_id),
  }),
  defineTool({
    name: 'cancel_outbound_mail',
    description: 'Cancel a piece while it is submitted (before printing starts); eligible credits are refunded once.',
    input: z.object(MailId),
    access: 'DELETE /v1/mail/:id',
    mutation: true,
    destructive: true,
    handler: (deps, auth, input, call) =>
      cancelMail(deps, auth, input.outbound_mail_id, { idempotencyKey: call.idempotencyKey }),
  }),
  defineTool({
    name: 'create_test_outbound_mail',
    description:
      'Test keys: create a sandbox piece without a document (a simulated letter of page_count pages, 1-100), or merged from template_id with merge_variables; every other field and safeguard is as in send_outbound_mail.',
    input: TestMailBody.extend(submitExtras),
    access: 'POST /v1/test/mail',
    mutation: true,
    idempotency: 'service',
    handler: async (deps, auth, input, call) => {
      const { page_count: pages, agent_id: agentId, max_cost_cents: maxCostCents, ...rest } = input;
      const { document, fields } = templateDocument(rest, false);
      const r = await submitAndAnswer(
        deps,
        auth,
        {
          fields: { ...fields, dry_run: false },
          document: document ?? { simulatedPages: pages ?? 1 },
          agentId,
          maxCostCents,
          idempotencyKey: call.idempotencyKey,
        },
        call.operation,
      );
      return new RestOutcome(r.status, r.body);
    },
  }),
  defineTool({
    name: 'advance_test_outbound_mail',
    description:
      'Test keys: move a sandbox piece one step (submitted → ready → mailed → delivered) with simulated photos and tracking, emitting the matching mail.* webhook.',
    input: z.object(MailId),
    access: 'POST /v1/test/mail/:id/advance',
    mutation: true,
    handler: (deps, auth, input, call) =>
      advanceTestMail(deps, auth, input.outbound_mail_id, { idempotencyKey: call.idempotencyKey }),
  }),
];
