// Test data built through the same services the API uses.
import { randomBytes } from 'node:crypto';
import type { Deps } from '../../services/shared/deps';
import { createMember } from '../../services/accounts/accounts';

export function uniqueEmail(tag = 'member'): string {
  return `${tag}-${randomBytes(5).toString('hex')}@example.test`;
}

export async function newMember(
  deps: Deps,
  opts: { creditsCents?: number; business?: boolean; rateLimitPerMinute?: number } = {},
) {
  return createMember(deps, {
    email: uniqueEmail(),
    fullName: 'Test Member',
    creditsCents: opts.creditsCents ?? 0,
    business: opts.business,
    rateLimitPerMinute: opts.rateLimitPerMinute ?? 100000,
    returnAddress: { name: 'Test Member', line1: '1 Return Way', city: 'Austin', state: 'TX', zip: '78701' },
  });
}
