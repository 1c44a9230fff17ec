// The sending member's settings, a type of its own so that pricing and quoting (services/outbound-mail)
// can name it without importing agents.ts, which imports the webhook services.
import type { PricingOverrides } from '../../domain/outbound-mail/pricing';
import type { MemberRow } from './rows';

/**
 * The sending member's columns a submission needs besides the mailbox: the stored return
 * address as is (whole or empty), the spending limits and the price overrides.
 */
export type SenderMember = Pick<
  MemberRow,
  | 'return_name'
  | 'return_company'
  | 'return_line1'
  | 'return_line2'
  | 'return_city'
  | 'return_state'
  | 'return_zip'
  | 'per_transaction_limit_cents'
  | 'daily_spend_limit_cents'
> & { pricing_overrides: PricingOverrides | null };
