// `npm run admin -- <command> [options]`: the operator CLI. Runs pending migrations
// first, so it works against a fresh database.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { closeDeps, createDeps } from '../services/shared/create-deps';
import type { Deps } from '../services/shared/deps';
import { sqlRows } from '../services/shared/sql';
import { createFacility, createMember, revokeKey } from '../services/accounts/accounts';
import { getBalance, topUp } from '../services/billing/credits';
import { approveMail, rejectMail } from '../services/outbound-mail/approval';
import { answerSupportConversation } from '../services/support/support';
import { assignMailbox } from '../services/physical-inbound/facility-intake';
import { enablePackages } from '../services/physical-inbound/package-custody';
import { setMemberRunSettings } from '../services/mail-runs/mail-runs';
import { ensureDatabase, migrate } from './stack';
import { cents, Command, flag, friendlyError, isUniqueViolation, required, withPositional } from './admin/cli';
import { consoleCommands } from './admin/console';
import { memberCommands } from './admin/members';
import { facilityCommands } from './admin/facilities';
import { operationsCommands } from './admin/operations';

export const commands: Record<string, Command> = {
  'member:create': {
    usage: 'member:create --email E --name N [--credits-cents C] [--business] [--rate-limit R] [--json]',
    description: 'Create a member with a live member key (sk_live_) and optional starting credits.',
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      'credits-cents': { type: 'string' },
      business: { type: 'boolean' },
      'rate-limit': { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(deps, opts) {
      const email = required(opts, 'email');
      try {
        const created = await createMember(deps, {
          email,
          fullName: required(opts, 'name'),
          business: Boolean(opts.business),
          creditsCents: opts['credits-cents'] ? cents(opts, 'credits-cents') : 0,
          rateLimitPerMinute: opts['rate-limit'] ? Number(opts['rate-limit']) : null,
        });
        return { member_id: created.member_id, key: created.key };
      } catch (err) {
        if (!isUniqueViolation(err, 'members_email_lower')) throw err;
        const [existing] = await sqlRows<{ id: string; email: string }>(
          deps.db,
          `SELECT id, email FROM members WHERE lower(email) = lower($1)`,
          [email],
        );
        throw new Error(
          `a member with email ${existing?.email ?? email} already exists (id ${existing?.id ?? 'unknown'})`,
        );
      }
    },
  },
  'member:set': {
    usage: 'member:set --member ID [--business true|false] [--agent-auto-fill true|false] [--json]',
    description:
      "Change a member's Business status and the human's Agent Auto-Fill authorisation (both needed for Business mail runs).",
    options: {
      member: { type: 'string' },
      business: { type: 'string' },
      'agent-auto-fill': { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(deps, opts) {
      const business = flag(opts, 'business');
      const agentAutoFill = flag(opts, 'agent-auto-fill');
      if (business === undefined && agentAutoFill === undefined)
        throw new Error('pass --business and/or --agent-auto-fill');
      return setMemberRunSettings(deps, required(opts, 'member'), { business, agentAutoFill });
    },
  },
  'credits:add': {
    usage: 'credits:add --member ID --cents C [--json]',
    description: 'Add credits to a member (a top-up entry in the ledger).',
    options: {
      member: { type: 'string' },
      cents: { type: 'string' },
      reference: { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(deps, opts) {
      const memberId = required(opts, 'member');
      const amount = cents(opts, 'cents');
      if (amount <= 0) throw new Error('--cents must be positive');
      const reference =
        typeof opts.reference === 'string' ? opts.reference : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
      await topUp(deps.db, {
        memberId,
        amountCents: amount,
        entryKey: `topup:admin:${memberId}:${reference}`,
        description: 'Operator top-up',
      });
      return { member_id: memberId, added_cents: amount, ...(await getBalance(deps, memberId)) };
    },
  },
  'facility:create': {
    usage: 'facility:create --name N [--json]',
    description: 'Create a facility and its first facility key (sk_facility_).',
    options: { name: { type: 'string' }, json: { type: 'boolean' } },
    async run(deps, opts) {
      return createFacility(deps, required(opts, 'name'));
    },
  },
  approve: {
    usage: 'approve --mail ID [--json]',
    description: "Approve an outbound piece awaiting approval: debits it now and submits it (the owner's approval).",
    options: { mail: { type: 'string' }, json: { type: 'boolean' } },
    async run(deps, opts) {
      return approveMail(deps, 'operator', required(opts, 'mail'));
    },
  },
  reject: {
    usage: 'reject --mail ID [--json]',
    description: 'Reject an outbound piece awaiting approval: it is cancelled and nothing is charged.',
    options: { mail: { type: 'string' }, json: { type: 'boolean' } },
    async run(deps, opts) {
      return rejectMail(deps, 'operator', required(opts, 'mail'));
    },
  },
  'key:revoke': {
    usage: 'key:revoke --key KEY_OR_ID [--json]',
    description: 'Revoke a member key, agent credential or facility key by raw key or id.',
    options: { key: { type: 'string' }, json: { type: 'boolean' } },
    async run(deps, opts) {
      const revoked = await revokeKey(deps, required(opts, 'key'));
      if (!revoked) throw new Error('no key matches');
      return { revoked: true, ...revoked };
    },
  },
  'support:answer': {
    usage: 'support:answer --case SUP-000042|CONVERSATION_ID --body TEXT [--resolve] [--json]',
    description: 'Answer a support ticket as the support team (status waiting_on_member, or resolved with --resolve).',
    options: {
      case: { type: 'string' },
      body: { type: 'string' },
      resolve: { type: 'boolean' },
      json: { type: 'boolean' },
    },
    async run(deps, opts) {
      return {
        message: await answerSupportConversation(deps, required(opts, 'case'), {
          body: required(opts, 'body'),
          resolve: Boolean(opts.resolve),
        }),
      };
    },
  },
  'mailbox:assign': {
    usage: 'mailbox:assign --member ID [--agent ID] [--facility ID] [--json]',
    description:
      "Give a member its private receiving mailbox (PMB-<n>) at a facility, or set the mailbox's default agent.",
    options: {
      member: { type: 'string' },
      agent: { type: 'string' },
      facility: { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(deps, opts) {
      return assignMailbox(deps, {
        memberId: required(opts, 'member'),
        agentId: typeof opts.agent === 'string' ? opts.agent : null,
        facilityId: typeof opts.facility === 'string' ? opts.facility : null,
      });
    },
  },
  'packages:enable': {
    usage: 'packages:enable --member ID [--disable] [--json]',
    description: 'Enable (or with --disable, disable) physical inbound custody (/v1/packages) for a member.',
    options: { member: { type: 'string' }, disable: { type: 'boolean' }, json: { type: 'boolean' } },
    async run(deps, opts) {
      return enablePackages(deps, required(opts, 'member'), !opts.disable);
    },
  },
  ...consoleCommands,
  ...memberCommands,
  ...facilityCommands,
  ...operationsCommands,
};

function help(): string {
  return [
    'Usage: npm run admin -- <command> [options]',
    '',
    'Commands:',
    ...Object.entries(commands).map(([, c]) => `  ${c.usage}\n      ${c.description}`),
  ].join('\n');
}

async function main() {
  const [name, ...rest] = process.argv.slice(2);
  const command = name ? commands[name] : undefined;
  if (!command) {
    console.log(help());
    process.exit(name && name !== 'help' && name !== '--help' ? 2 : 0);
  }
  const parsed = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: true });
  const values = withPositional(command, parsed.values, parsed.positionals);
  const config = loadConfig();
  await ensureDatabase(config.databaseUrl);
  await migrate(config.databaseUrl);
  const deps = await createDeps({ ...config, logLevel: 'silent' }, { poolSize: 2, name: 'admin' });
  try {
    const result = await command.run(deps, values);
    console.log(
      values.json ? JSON.stringify(result) : command.format ? command.format(result) : JSON.stringify(result, null, 2),
    );
  } finally {
    await closeDeps(deps);
  }
}

if (require.main === module) {
  main().catch((err) => {
    console.error(`error: ${friendlyError(err)}`);
    process.exit(1);
  });
}
