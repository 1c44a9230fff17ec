// The HTTP answer of a submission, shared by POST /v1/mail, POST /v1/test/mail and the
// MCP tools send_outbound_mail and create_test_outbound_mail: 201 with the created piece,
// 200 with a dry run's quote, stored under the Idempotency-Key and replayed to retries.
//
// The first idempotency guard (runIdempotent) wraps the service here rather than inside
// it because what it stores and replays is this HTTP answer, refusals included; the
// service keeps the second guard, the key on the piece row, which only it can write in
// the same transaction as the debit. Both still run before anything is uploaded or
// debited: runIdempotent before the service starts, the row lookup as its first step.
import type { AuthContext } from '../../../services/accounts/auth';
import type { Deps } from '../../../services/shared/deps';
import { IdempotentResult, runIdempotent } from '../../../services/shared/idempotency';
import { errors } from '../../../domain/shared/errors';
import type { TemplateLetter } from '../../../services/outbound-mail/quote';
import {
  submissionFingerprint,
  SubmitMailRequest,
  submitMail,
  SubmitOutcome,
} from '../../../services/outbound-mail/submit';

function submissionAnswer(outcome: SubmitOutcome): IdempotentResult {
  return outcome.kind === 'dry_run' ? { status: 200, body: outcome.quote } : { status: 201, body: outcome.mail };
}

/** The template fields of a submission (extension): a letter merged from a template instead of a document. */
export interface TemplateFields {
  template_id?: string;
  template_version?: number;
  merge_variables?: Record<string, unknown>;
}

/**
 * Splits the template fields off a submission's fields: the document they name (null when
 * template_id is not sent) and the remaining fields. `documentSent` says whether a document
 * came too: both is a 400, neither is left to the caller.
 */
export function templateDocument<F extends TemplateFields>(
  input: F,
  documentSent: boolean,
): { document: TemplateLetter | null; fields: Omit<F, keyof TemplateFields> } {
  const { template_id: id, template_version: version, merge_variables: variables, ...fields } = input;
  if (id === undefined) return { document: null, fields };
  if (documentSent)
    throw errors.validation([{ path: 'template_id', message: 'send a document or template_id, not both' }]);
  return {
    document: { template: { id, ...(version !== undefined ? { version } : {}), variables: variables ?? {} } },
    fields,
  };
}

/** Submits once per (caller, `operation`, Idempotency-Key): the route's name, or `mcp:<tool>`. */
export async function submitAndAnswer(deps: Deps, auth: AuthContext, req: SubmitMailRequest, operation: string) {
  const fingerprint = submissionFingerprint(req);
  return runIdempotent(deps, auth, { operation, key: req.idempotencyKey, fingerprint }, async () =>
    submissionAnswer(await submitMail(deps, auth, req, fingerprint)),
  );
}
