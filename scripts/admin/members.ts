// Operator commands for members: find one by email, suspend or reinstate it, correct its credits.
import { randomUUID } from 'node:crypto';
import { findMembers, MemberSummary, setMemberStatus } from '../../services/accounts/accounts';
import { adjustCredits } from '../../services/billing/credits';
import { noSuch } from '../../services/operations/facilities';
import { formatCents } from '../../domain/shared/money';
import { Command, required, signedCents, optional, table } from './cli';

const member = { member: { type: 'string' }, reason: { type: 'string' }, json: { type: 'boolean' } } as const;

async function changeStatus(
  deps: Parameters<Command['run']>[0],
  opts: Parameters<Command['run']>[1],
  status: 'active' | 'suspended',
) {
  const id = required(opts, 'member');
  const result = await setMemberStatus(deps.db, id, status, required(opts, 'reason'));
  if (!result) throw noSuch('member', id);
  return result;
}

export const memberCommands: Record<string, Command> = {
  'member:find': {
    usage: 'member:find --email TEXT [--json]',
    description:
      'Find members whose email contains TEXT (case-insensitive; the exact match first): status, balance, facility, keys.',
    options: { email: { type: 'string' }, json: { type: 'boolean' } },
    async run(deps, opts) {
      const text = required(opts, 'email');
      return { query: text, members: await findMembers(deps.db, text) };
    },
    format: (r: { query: string; members: MemberSummary[] }) =>
      r.members.length
        ? table(
            ['ID', 'EMAIL', 'NAME', 'STATUS', 'BALANCE', 'FACILITY', 'KEYS', 'AGENTS'],
            r.members.map((m) => [
              m.id,
              m.email,
              m.full_name,
              m.status === 'active' ? 'active' : `suspended: ${m.status_reason ?? ''}`,
              formatCents(m.balance_cents),
              m.facility_id ?? '(default)',
              m.active_keys,
              m.agents,
            ]),
          )
        : `no member's email contains "${r.query}"`,
  },
  'member:suspend': {
    usage: 'member:suspend --member ID --reason TEXT [--json]',
    description:
      'Suspend a member: every key of the account (member and agent keys) is refused with 401 member_suspended.',
    options: member,
    run: (deps, opts) => changeStatus(deps, opts, 'suspended'),
  },
  'member:unsuspend': {
    usage: 'member:unsuspend --member ID --reason TEXT [--json]',
    description: 'Reinstate a suspended member: its keys work again.',
    options: member,
    run: (deps, opts) => changeStatus(deps, opts, 'active'),
  },
  'credits:adjust': {
    usage: 'credits:adjust --member ID --cents -N|+N --reason TEXT [--reference R] [--json]',
    description:
      "Correct a member's credits with an adjustment entry in the ledger (never an edit). Refuses to go below zero. " +
      'With --reference the adjustment applies once however often it is run.',
    options: {
      member: { type: 'string' },
      cents: { type: 'string' },
      reason: { type: 'string' },
      reference: { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(deps, opts) {
      const memberId = required(opts, 'member');
      const result = await adjustCredits(deps, {
        memberId,
        amountCents: signedCents(opts, 'cents'),
        reason: required(opts, 'reason'),
        reference: optional(opts, 'reference') ?? randomUUID(),
      });
      if (!result) throw noSuch('member', memberId);
      return result;
    },
  },
};
