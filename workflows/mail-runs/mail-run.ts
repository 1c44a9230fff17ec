// One workflow per Business mail run (`mail-run-<uuid>`): it owns the run's fixed window
// and its funding. Commit and cancel are Updates that run one at a time; each calls one
// idempotent activity that changes the run under a row lock (funding debits every
// waiting child once, in one transaction). When the window closes without a funded
// run, the run is committed automatically: funded if it can be, cancelled if not, or
// closed when nothing waits for funding. Once settled, every waiting child is signalled.
// Nothing ever moves the close time: it is openedAt + windowSeconds from the input.
// A cancellation request from Temporal cancels the run like DELETE before it is funded,
// and is refused and recorded after.
import { allHandlersFinished, ApplicationFailure, condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { createMailRunActivities } from '../../activities/mail-runs/mail-run';
import { cancelMailRunUpdate, commitMailRunUpdate, MAIL_RUN_FAILURE, MailRunWorkflowInput } from './contracts';
import { ObjectStatus } from '../shared/search-attributes';
import { cancelOrRefuse, runShieldedFromCancellation } from '../shared/operator-cancellation';
import { exclusiveTurns } from '../shared/turns';
import { publishStatus, showDetails } from '../shared/status-visibility';
import { call } from '../shared/activity-failures';
import { isSettledMailRun, MailRunStatusName } from '../../domain/workflow-safe/mail-runs';
import { DATABASE_STEP, MAIL_RUN_NOTIFICATION } from '../shared/activity-options';

type MailRunActivities = ReturnType<typeof createMailRunActivities>;

// A funded run must reach its children whatever Postgres or Temporal do: retry without limit.
const acts = proxyActivities<MailRunActivities>(DATABASE_STEP);
const notify = proxyActivities<MailRunActivities>(MAIL_RUN_NOTIFICATION);

function refuse(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

export async function mailRunWorkflow(input: MailRunWorkflowInput): Promise<MailRunStatusName> {
  const { mailRunUuid } = input;
  let status: MailRunStatusName = input.status;
  // Handlers change `status` while the main flow awaits; read it through this so TypeScript does not narrow it.
  const current = (): MailRunStatusName => status;

  const turns = exclusiveTurns();

  let refusedCancellation: string | null = null;
  const closesAt = new Date(Date.parse(input.openedAt) + input.windowSeconds * 1000).toISOString();
  const WAITING: Partial<Record<MailRunStatusName, string>> = {
    open: `Open: taking pieces until ${closesAt}, then committed automatically.`,
    funding_pending: `Waiting for funding (commit) until ${closesAt}; cancelled then if still unfunded.`,
    funded: 'Funded: telling its pieces, which then go on as submitted pieces.',
  };
  const details = () =>
    showDetails(
      [`**Mail run ${input.mailRunId}** (${mailRunUuid}): **${status}**`, WAITING[status] ?? 'Settled.'],
      refusedCancellation,
    );

  function setStatus(next: MailRunStatusName): void {
    if (next === status) return;
    status = next;
    publishStatus(ObjectStatus, next);
    details();
  }

  setHandler(
    commitMailRunUpdate,
    () =>
      turns.run(async () => {
        const r = await call(acts.fundMailRun({ mailRunUuid, trigger: 'commit' }));
        setStatus(r.status);
        return r;
      }),
    {
      validator: () => {
        if (status === 'cancelled' || status === 'closed')
          throw refuse(MAIL_RUN_FAILURE.notCommittable, `The run is ${status}; it can no longer be committed.`);
      },
    },
  );

  setHandler(
    cancelMailRunUpdate,
    () =>
      turns.run(async () => {
        const r = await call(acts.cancelMailRun({ mailRunUuid }));
        setStatus(r.status);
        return r;
      }),
    {
      validator: () => {
        if (status === 'funded' || status === 'closed')
          throw refuse(
            MAIL_RUN_FAILURE.notCancellable,
            `The run is ${status}; only runs that are not funded yet can be cancelled.`,
          );
      },
    },
  );

  /** A cancellation request from Temporal: cancel like DELETE before funding, else refuse and record why. */
  const onCancellationRequest = cancelOrRefuse(turns, {
    objectType: 'mail_run',
    objectId: mailRunUuid,
    status: () => status,
    settled: () => status === 'cancelled',
    cancellable: () => status !== 'funded' && status !== 'closed',
    cancel: async () => setStatus((await call(acts.cancelMailRun({ mailRunUuid }))).status),
    whyNot: () => `the run is ${status}; only runs that are not funded yet can be cancelled.`,
    showRefusal: (reason) => {
      refusedCancellation = reason;
      details();
    },
  });

  return runShieldedFromCancellation(async () => {
    details();
    const remainingMs = Date.parse(input.openedAt) + input.windowSeconds * 1000 - Date.now();
    if (remainingMs > 0)
      await condition(() => isSettledMailRun(status), remainingMs, {
        summary: 'Window close: commit the run automatically',
      });
    await turns.run(async () => {
      if (isSettledMailRun(status)) return;
      setStatus((await acts.fundMailRun({ mailRunUuid, trigger: 'close' })).status);
    });

    await notify.notifyMailRunChildren({ mailRunUuid });
    await condition(allHandlersFinished);
    return current();
  }, onCancellationRequest);
}
