// Advancing a sandbox piece (POST /v1/test/mail/{id}/advance, MCP
// advance_test_outbound_mail): one fulfillment step at a time through the piece
// workflow's own handlers, as a facility would move it.
import type { Deps } from '../shared/deps';
import type { AuthContext } from '../accounts/auth';
import { updateIdFor } from '../shared/workflow-gateway';
import { loadMailRow, MailRecord } from './record';
import { recordOf, visibleMailRow } from './read';
import { mailStateConflict, MailWorkflowClosed, runMailUpdate } from './workflow';
import { testAdvanceUpdate } from '../../workflows/outbound-mail/contracts';

/**
 * POST /v1/test/mail/{id}/advance: one sandbox step through the workflow's own handlers.
 * With an idempotency key, the step is also one Temporal update id, so a retry whose
 * first answer was lost between the workflow and the API moves the piece once.
 */
export async function advanceTestMail(
  deps: Deps,
  auth: AuthContext,
  id: string,
  opts: { idempotencyKey?: string } = {},
): Promise<MailRecord> {
  const row = await visibleMailRow(deps, auth, id);
  const updateId = updateIdFor(auth, 'mail.test_advance', opts.idempotencyKey);
  try {
    await runMailUpdate(deps, row, testAdvanceUpdate, [], { updateId });
  } catch (err) {
    if (!(err instanceof MailWorkflowClosed)) throw err;
    const now = (await loadMailRow(deps.db, id))!;
    throw mailStateConflict(`A ${now.status} piece cannot be advanced.`, { status: now.status });
  }
  return recordOf(deps, (await loadMailRow(deps.db, id))!);
}
