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
import { cancelOrRefuse, OperatorCancellation, runShieldedFromCancellation } from '../shared/operator-cancellation';
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
  const run = new MailRun(input);
  run.setHandlers();
  return runShieldedFromCancellation(() => run.run(), run.onCancellationRequest);
}

/** One mail run's workflow state, its handlers, and its main flow. */
class MailRun {
  readonly mailRunUuid: string;
  status: MailRunStatusName;
  readonly turns = exclusiveTurns();
  refusedCancellation: string | null = null;
  readonly closesAt: string;
  readonly onCancellationRequest: () => Promise<void>;

  constructor(readonly input: MailRunWorkflowInput) {
    this.mailRunUuid = input.mailRunUuid;
    this.status = input.status;
    this.closesAt = new Date(Date.parse(input.openedAt) + input.windowSeconds * 1000).toISOString();
    this.onCancellationRequest = cancelOrRefuse(this.turns, this.operatorCancellation());
  }

  /** Handlers change `status` while the main flow awaits; read it through this so TypeScript does not narrow it. */
  current(): MailRunStatusName {
    return this.status;
  }

  waiting(): string | undefined {
    switch (this.status) {
      case 'open':
        return `Open: taking pieces until ${this.closesAt}, then committed automatically.`;
      case 'funding_pending':
        return `Waiting for funding (commit) until ${this.closesAt}; cancelled then if still unfunded.`;
      case 'funded':
        return 'Funded: telling its pieces, which then go on as submitted pieces.';
      default:
        return undefined;
    }
  }

  details(): void {
    showDetails(
      [`**Mail run ${this.input.mailRunId}** (${this.mailRunUuid}): **${this.status}**`, this.waiting() ?? 'Settled.'],
      this.refusedCancellation,
    );
  }

  setStatus(next: MailRunStatusName): void {
    if (next === this.status) return;
    this.status = next;
    publishStatus(ObjectStatus, next);
    this.details();
  }

  setHandlers(): void {
    const { mailRunUuid, turns } = this;
    setHandler(
      commitMailRunUpdate,
      () =>
        turns.run(async () => {
          const r = await call(acts.fundMailRun({ mailRunUuid, trigger: 'commit' }));
          this.setStatus(r.status);
          return r;
        }),
      {
        validator: () => {
          const { status } = this;
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
          this.setStatus(r.status);
          return r;
        }),
      {
        validator: () => {
          const { status } = this;
          if (status === 'funded' || status === 'closed')
            throw refuse(
              MAIL_RUN_FAILURE.notCancellable,
              `The run is ${status}; only runs that are not funded yet can be cancelled.`,
            );
        },
      },
    );
  }

  /** A cancellation request from Temporal: cancel like DELETE before funding, else refuse and record why. */
  operatorCancellation(): OperatorCancellation {
    return {
      objectType: 'mail_run',
      objectId: this.mailRunUuid,
      status: () => this.status,
      settled: () => this.status === 'cancelled',
      cancellable: () => this.status !== 'funded' && this.status !== 'closed',
      cancel: async () => this.setStatus((await call(acts.cancelMailRun({ mailRunUuid: this.mailRunUuid }))).status),
      whyNot: () => `the run is ${this.status}; only runs that are not funded yet can be cancelled.`,
      showRefusal: (reason) => {
        this.refusedCancellation = reason;
        this.details();
      },
    };
  }

  /** The main flow: at the window's close, commit the run unless it settled; then tell its children. */
  async run(): Promise<MailRunStatusName> {
    const { input, mailRunUuid } = this;
    this.details();
    const remainingMs = Date.parse(input.openedAt) + input.windowSeconds * 1000 - Date.now();
    if (remainingMs > 0)
      await condition(() => isSettledMailRun(this.status), remainingMs, {
        summary: 'Window close: commit the run automatically',
      });
    await this.turns.run(async () => {
      if (isSettledMailRun(this.status)) return;
      this.setStatus((await acts.fundMailRun({ mailRunUuid, trigger: 'close' })).status);
    });

    await notify.notifyMailRunChildren({ mailRunUuid });
    await condition(allHandlersFinished);
    return this.current();
  }
}
