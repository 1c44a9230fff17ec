// Business mail runs: open, read, commit, cancel. Pieces join a run through
// POST /v1/mail with mail_run_id.
import { defineRoute, RouteDef } from '../../route';
import {
  CancelledMailRunSchema,
  CommittedMailRunSchema,
  FundingPendingSchema,
  MailRunParams,
  MailRunSchema,
  OpenMailRunBody,
} from './mail-runs.schemas';
import { cancelMailRun, commitMailRun, getMailRun, openMailRun } from '../../../services/mail-runs/mail-runs';

const RULES =
  'Mail-run rules: a live agent key (test keys: 403 live_key_required) without force_approval (409 MAIL_RUN_FORCE_APPROVAL), a Business account ' +
  '(403 BUSINESS_REQUIRED) whose human authorised Agent Auto-Fill (403 AUTO_FILL_NOT_AUTHORISED).';

const errorResponses = {
  400: { description: 'Validation failed (fields[]) or X-Service-MD-Version missing' },
  403: {
    description:
      'live_key_required, agent_key_required, BUSINESS_REQUIRED, AUTO_FILL_NOT_AUTHORISED or a missing scope',
  },
  404: { description: 'MAIL_RUN_NOT_FOUND' },
  503: {
    description:
      "MAIL_RUN_WORKFLOW_UNAVAILABLE (opening: the run's workflow could not be started) or WORKFLOW_UNAVAILABLE (commit, cancel: " +
      'no answer within the deadline); repeat the same call: it never charges twice',
  },
};

/** A read never waits on the run's workflow (a lost start is retried and its failure ignored): no 503. */
const readResponses = { 400: errorResponses[400], 403: errorResponses[403], 404: errorResponses[404] };
/** Opening names no existing run (the same mail_run_id again answers that run): no 404. */
const openResponses = { 400: errorResponses[400], 403: errorResponses[403], 503: errorResponses[503] };

export const routes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/v1/mail-runs',
    summary: 'Open a Business mail run',
    description:
      `Opens a run with a fixed five-minute window (closes_at = opened_at + 300 s; nothing ever moves it). ${RULES} ` +
      'Opening the same mail_run_id again answers the existing run with 200. Add pieces with POST /v1/mail and mail_run_id while the run is open: ' +
      'they wait, not charged, as funding_pending, except priority, carrierx_overnight and carriery_next_day pieces, which are debited and submitted at once. ' +
      'Then commit. A run not funded when its window closes is committed automatically: funded if credits cover it, otherwise cancelled with its waiting pieces.',
    tags: ['Outbound mail'],
    body: OpenMailRunBody,
    responses: {
      201: { description: 'The run was opened', schema: MailRunSchema },
      200: { description: 'The run with this mail_run_id already exists (unchanged)', schema: MailRunSchema },
      ...openResponses,
      409: {
        description:
          'MAIL_RUN_FORCE_APPROVAL, MAIL_RUN_ID_TAKEN (another agent of the account uses the id) or SERVICE_MD_VERSION_MISMATCH',
      },
    },
    handler: async ({ deps, auth, body }) => {
      const opened = await openMailRun(deps, auth, body);
      return { status: opened.created ? 201 : 200, body: opened.run };
    },
  }),

  defineRoute({
    method: 'get',
    path: '/v1/mail-runs/:id',
    summary: 'Read a Business mail run',
    description:
      'The run with its children. Poll until status is funded, then poll each child (GET /v1/mail/{id}) as it moves to submitted.',
    tags: ['Outbound mail'],
    params: MailRunParams,
    responses: { 200: { description: 'The run', schema: MailRunSchema }, ...readResponses },
    handler: async ({ deps, auth, params }) => ({ body: await getMailRun(deps, auth, params.id) }),
  }),

  defineRoute({
    method: 'post',
    path: '/v1/mail-runs/:id/commit',
    summary: 'Commit a Business mail run',
    description:
      'Funds the run: every piece waiting for funding is debited once, in one transaction, and then moves to submitted by itself. ' +
      'Answers 200 when funded (a repeat answers 200 again with credits_charged_cents 0). Answers 202 while funding waits for a human: pending_reason ' +
      'insufficient_credits (with billing_url and the shortfall), business_required, agent_auto_fill_not_authorised or daily_spend_limit; retry the same ' +
      'call after the human acted, before closes_at. No more pieces join a run once it is committed. Retries never extend the close time.',
    tags: ['Outbound mail'],
    params: MailRunParams,
    responses: {
      200: { description: 'Funded', schema: CommittedMailRunSchema },
      202: {
        description: 'Funding pending: a human must add credits or change a setting; retry the same commit',
        schema: FundingPendingSchema,
      },
      ...errorResponses,
      409: {
        description:
          'MAIL_RUN_NOT_COMMITTABLE (cancelled or closed), MAIL_RUN_FORCE_APPROVAL or SERVICE_MD_VERSION_MISMATCH',
      },
    },
    handler: async ({ deps, auth, params }) => {
      const committed = await commitMailRun(deps, auth, params.id);
      // 202: nothing is wrong with the call, a human still has to act before funding.
      return { status: committed.status === 'funded' ? 200 : 202, body: committed };
    },
  }),

  defineRoute({
    method: 'delete',
    path: '/v1/mail-runs/:id',
    summary: 'Cancel a Business mail run before funding',
    description:
      'Cancels a run that is open or funding_pending; its pieces waiting for funding are cancelled (cancellation_reason mail_run_cancelled) and nothing ' +
      'is charged for them. Pieces that committed immediately stay submitted (cancel them with DELETE /v1/mail/{id}). Repeating answers already_cancelled ' +
      'true. 409 MAIL_RUN_NOT_CANCELLABLE once funded or closed.',
    tags: ['Outbound mail'],
    params: MailRunParams,
    responses: {
      200: { description: 'Cancelled (or already cancelled)', schema: CancelledMailRunSchema },
      ...errorResponses,
      409: { description: 'MAIL_RUN_NOT_CANCELLABLE or SERVICE_MD_VERSION_MISMATCH' },
    },
    handler: async ({ deps, auth, params }) => ({ body: await cancelMailRun(deps, auth, params.id) }),
  }),
];
