// Operator commands of the owner console.
import { createSignInLink, SIGN_IN_LINK_MINUTES } from '../../services/accounts/console-sessions';
import { Command, required } from './cli';

export const consoleCommands: Record<string, Command> = {
  'member:login-link': {
    usage: 'member:login-link --member ID [--json]',
    description: `Print a one-time console sign-in link for a member who has no key at hand (valid ${SIGN_IN_LINK_MINUTES} minutes, one use).`,
    options: { member: { type: 'string' }, json: { type: 'boolean' } },
    async run(deps, opts) {
      return createSignInLink(deps, required(opts, 'member'));
    },
  },
};
