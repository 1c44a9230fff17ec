// Operator commands for daily operations: look at a piece, list pieces, find stuck work,
// cancel a piece with its refund, and run the reconcilers now. Every read takes --json.
import type { Deps } from '../../services/shared/deps';
import {
  findStuckWork,
  listMailForOperator,
  operatorCancelMail,
  runReconcilersNow,
  showMail,
  StuckReport,
  OPEN_MAIL_STATUSES,
} from '../../services/operations/operations';
import { MAIL_STATUSES } from '../../domain/workflow-safe/mail-rules';
import { Command, count, durationSeconds, Options, required } from './cli';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuidOption(opts: Options, name: string): string | undefined {
  const v = opts[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !UUID.test(v)) throw new Error(`--${name} must be an id (a UUID)`);
  return v;
}

function mailId(opts: Options): string {
  const id = required(opts, 'mail');
  if (!UUID.test(id)) throw new Error(`${id} is not an outbound mail id (a UUID)`);
  return id;
}

function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (!rows.length) return '  (none)';
  const cells = rows.map((r) => columns.map((c) => String(r[c] ?? '')));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i].length)));
  const line = (values: string[]) => `  ${values.map((v, i) => v.padEnd(widths[i])).join('  ')}`.trimEnd();
  return [line(columns), ...cells.map(line)].join('\n');
}

type Shown = Awaited<ReturnType<typeof showMail>>;

export const operationsCommands: Record<string, Command> = {
  'mail:show': {
    usage: 'mail:show ID | --mail ID [--json]',
    description:
      'One piece: its row, its workflow (status, pending activities, Temporal UI link), ledger lines, events, webhook deliveries and incidents.',
    options: { mail: { type: 'string' }, json: { type: 'boolean' } },
    positional: 'mail',
    run: async (deps, opts) => showMail(deps, mailId(opts)),
    format(result) {
      const r = result as Shown;
      return [
        `Outbound mail ${r.mail.id}: ${r.mail.status} since ${r.mail.status_since} (${r.mail.live ? 'live' : 'sandbox'})`,
        `  member ${r.mail.member_id}  agent ${r.mail.agent_id ?? '-'}  facility ${r.mail.facility_id ?? '-'}  price ${r.mail.price_cents}c`,
        `  printing started: ${r.mail.printing_started_at ?? 'no'}  cancellation: ${r.mail.cancellation_reason ?? '-'}`,
        `  ${r.mail.url}`,
        `Workflow ${r.workflow.workflow_id}: ${r.workflow.status}${r.workflow.temporal_ui ? `  ${r.workflow.temporal_ui}` : ''}`,
        ...r.workflow.pending_activities.map(
          (a) => `  pending ${a.activity_type} attempt ${a.attempt}${a.last_failure ? `: ${a.last_failure}` : ''}`,
        ),
        'Ledger:',
        table(r.ledger, ['kind', 'amount_cents', 'entry_key']),
        'Events:',
        table(r.events, ['event_type', 'created_at']),
        'Webhook deliveries:',
        table(r.webhook_deliveries, ['event_type', 'target_type', 'status', 'attempts_count', 'last_status_code']),
        'Incidents:',
        table(r.incidents, ['kind', 'action', 'workflow_status', 'detail']),
      ].join('\n');
    },
  },
  'mail:list': {
    usage: 'mail:list [--status S] [--member ID] [--agent ID] [--older-than 1h] [--live|--test] [--limit N] [--json]',
    description:
      'Pieces, longest in their status first; --older-than keeps those in their status for longer than that.',
    options: {
      status: { type: 'string' },
      member: { type: 'string' },
      agent: { type: 'string' },
      'older-than': { type: 'string' },
      live: { type: 'boolean' },
      test: { type: 'boolean' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(deps: Deps, opts: Options) {
      const status = typeof opts.status === 'string' ? opts.status : undefined;
      if (status !== undefined && !(MAIL_STATUSES as readonly string[]).includes(status))
        throw new Error(`--status must be one of ${MAIL_STATUSES.join(', ')}`);
      if (opts.live && opts.test) throw new Error('pass --live or --test, not both');
      return listMailForOperator(deps, {
        status,
        memberId: uuidOption(opts, 'member'),
        agentId: uuidOption(opts, 'agent'),
        olderThanSeconds: opts['older-than'] === undefined ? undefined : durationSeconds(opts, 'older-than'),
        live: opts.live ? true : opts.test ? false : undefined,
        limit: count(opts, 'limit', 50, 1000),
      });
    },
    format: (result) =>
      table(result as Record<string, unknown>[], ['id', 'status', 'status_since', 'live', 'member_id', 'price_cents']),
  },
  stuck: {
    usage: 'stuck [--older-than 1h] [--member ID] [--limit N] [--json]',
    description:
      `Work to look at: open pieces (${OPEN_MAIL_STATUSES.join(', ')}) in their status longer than --older-than, lost workflow starts, ` +
      'workflows closed while their record is open, and pieces waiting on a worker.',
    options: {
      'older-than': { type: 'string' },
      member: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    },
    run: async (deps, opts) =>
      findStuckWork(deps, {
        olderThanSeconds: durationSeconds(opts, 'older-than', '1h'),
        memberId: uuidOption(opts, 'member'),
        limit: count(opts, 'limit', 100, 1000),
      }),
    format(result) {
      const r = result as StuckReport;
      return [
        `Task queue ${r.task_queue.name}: ${r.task_queue.workflow_pollers} workflow and ${r.task_queue.activity_pollers} activity pollers`,
        `In their status longer than ${r.older_than_seconds}s:`,
        table(r.in_status_too_long, ['id', 'status', 'status_since', 'workflow_status']),
        'Lost workflow starts:',
        table(r.lost_starts, ['object_type', 'object_id', 'status', 'created_at']),
        'Workflows closed while the record is open (npm run admin -- reconcile restarts them):',
        table(r.closed_workflows, ['object_type', 'object_id', 'object_status', 'workflow_status']),
        'Waiting on a worker:',
        table(r.waiting_on_worker, ['object_id', 'reason']),
      ].join('\n');
    },
  },
  'mail:cancel': {
    usage: 'mail:cancel --mail ID --refund --reason TEXT [--json]',
    description:
      'Cancel a piece as the operator through its workflow (like Request Cancellation in the Temporal UI): refunds what was charged, once. ' +
      'Refused once printing has started.',
    options: {
      mail: { type: 'string' },
      refund: { type: 'boolean' },
      reason: { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(deps, opts) {
      const id = mailId(opts);
      const reason = required(opts, 'reason');
      if (!opts.refund) throw new Error('pass --refund: cancelling a piece always refunds what was charged for it');
      return operatorCancelMail(deps, id, reason);
    },
  },
  reconcile: {
    usage: 'reconcile [--json]',
    description:
      'Run the reconcilers now: start lost workflow starts, restart (or report) workflows closed while their record is open, and apply unapplied Stripe events and uncharged automatic reloads.',
    options: { json: { type: 'boolean' } },
    run: (deps) => runReconcilersNow(deps),
  },
};
