// Operator commands for facilities: which one gets new work (default, per-member), deactivation
// with its queued work moved, and moving a piece or batch no facility has begun.
import {
  assignMemberFacility,
  deactivateFacility,
  FacilitySummary,
  listFacilities,
  reassignBatch,
  reassignMail,
  setDefaultFacility,
} from '../../services/operations/facilities';
import { Command, optional, required, table } from './cli';

export const facilityCommands: Record<string, Command> = {
  'facility:list': {
    usage: 'facility:list [--json]',
    description:
      'Every facility: default or not, active or inactive, queued work (not begun), work in progress, assigned members.',
    options: { json: { type: 'boolean' } },
    run: (deps) => listFacilities(deps.db),
    format: (r: Awaited<ReturnType<typeof listFacilities>>) =>
      [
        table(
          ['ID', 'NAME', 'STATUS', 'DEFAULT', 'QUEUED MAIL', 'QUEUED BATCHES', 'IN PROGRESS', 'MEMBERS'],
          r.facilities.map((f: FacilitySummary) => [
            f.id,
            f.name,
            f.status,
            f.is_default ? 'yes' : '',
            f.queued.mail,
            f.queued.batches,
            `${f.in_progress.mail} mail, ${f.in_progress.batches} batches`,
            f.assigned_members,
          ]),
        ),
        '',
        `New work of members without an assignment goes to: ${r.new_work_goes_to ?? 'no facility (none is active)'}` +
          (r.default_facility_id ? '' : ' (no default is set: oldest active facility)'),
        ...(r.unassigned_queued_mail
          ? [
              `Live pieces submitted while no facility was active (any facility may take them): ${r.unassigned_queued_mail}`,
            ]
          : []),
      ].join('\n'),
  },
  'facility:set-default': {
    usage: 'facility:set-default --facility ID [--json]',
    description:
      'Make an active facility the default: new live work of members without an assignment goes there. Queued work stays where it is.',
    options: { facility: { type: 'string' }, json: { type: 'boolean' } },
    run: (deps, opts) => setDefaultFacility(deps, required(opts, 'facility')),
  },
  'facility:assign': {
    usage: 'facility:assign --member ID (--facility ID | --default) [--json]',
    description:
      "Send a member's new live work to a facility (or with --default, back to the default facility). Queued work stays; move it with mail:reassign.",
    options: {
      member: { type: 'string' },
      facility: { type: 'string' },
      default: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    async run(deps, opts) {
      const facility = optional(opts, 'facility');
      if (!facility === !opts.default) throw new Error('pass either --facility ID or --default');
      return assignMemberFacility(deps, required(opts, 'member'), facility ?? null);
    },
  },
  'facility:deactivate': {
    usage: 'facility:deactivate --facility ID [--new-default ID] [--leave-in-progress] [--json]',
    description:
      "Deactivate a facility in one step: its keys stop working, its assignments end and its queued work moves to each member's " +
      'facility (assignment, else default). Refused when queued work would have nowhere to go, or while it has work in progress unless --leave-in-progress.',
    options: {
      facility: { type: 'string' },
      'new-default': { type: 'string' },
      'leave-in-progress': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    run: (deps, opts) =>
      deactivateFacility(deps, required(opts, 'facility'), {
        newDefaultId: optional(opts, 'new-default') ?? null,
        leaveInProgress: Boolean(opts['leave-in-progress']),
      }),
  },
  'mail:reassign': {
    usage: 'mail:reassign --mail ID --facility ID [--json]',
    description:
      'Move a live piece whose printing has not started to another active facility (the old facility gets 404 on it from then on).',
    options: { mail: { type: 'string' }, facility: { type: 'string' }, json: { type: 'boolean' } },
    run: (deps, opts) => reassignMail(deps, required(opts, 'mail'), required(opts, 'facility')),
  },
  'batch:reassign': {
    usage: 'batch:reassign --batch ID --facility ID [--json]',
    description: 'Move a confirmed live batch no facility has started (or failed) to another active facility.',
    options: { batch: { type: 'string' }, facility: { type: 'string' }, json: { type: 'boolean' } },
    run: (deps, opts) => reassignBatch(deps, required(opts, 'batch'), required(opts, 'facility')),
  },
};
