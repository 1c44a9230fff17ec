// The offline recipient address check of a submission (domain/outbound-mail/address-check.ts)
// as the mail service uses it: computed for every dry run and submission, refused only when
// the sender opted in with strict_address=true, shown as dry-run warnings, and stored on the
// piece (address_check) so its record shows what the sender was told. Advice only: the
// piece is printed with the address as sent, never with the normalised lines.
import {
  AddressCheck,
  AddressWarning,
  addressCheckWarnings,
  checkUsAddress,
} from '../../domain/outbound-mail/address-check';
import { ApiError } from '../../domain/shared/errors';
import type { MailRow } from './rows';
import type { SubmitMailFields } from './submission-fields';

/** The recipient fields of a validated submission, and the opt-in refusal. */
export type AddressReviewFields = Pick<
  SubmitMailFields,
  | 'recipient_line1'
  | 'recipient_line2'
  | 'recipient_city'
  | 'recipient_state'
  | 'recipient_zip'
  | 'recipient_country'
  | 'strict_address'
>;

/** The request field each checked field came from. */
const REQUEST_FIELD: Record<AddressWarning['field'], string> = {
  line1: 'recipient_line1',
  line2: 'recipient_line2',
  city: 'recipient_city',
  state: 'recipient_state',
  zip: 'recipient_zip',
  country: 'recipient_country',
};

/**
 * Checks the recipient. With strict_address=true a doubtful address is refused as a 400
 * naming the fields its warnings name, before anything is priced, stored or debited.
 */
export function reviewRecipientAddress(f: AddressReviewFields): AddressCheck {
  const check = checkUsAddress({
    line1: f.recipient_line1,
    line2: f.recipient_line2 ?? null,
    city: f.recipient_city,
    state: f.recipient_state,
    zip: f.recipient_zip,
    country: f.recipient_country,
  });
  if (f.strict_address && check.deliverability === 'doubtful') {
    const fields = check.warnings
      .filter((w) => w.code !== 'not_checked')
      .map((w) => ({ path: REQUEST_FIELD[w.field], message: w.message }));
    throw new ApiError(
      400,
      'The recipient address looks undeliverable (strict_address=true); nothing was stored or charged.',
      {
        fields,
        details: { address_check: check },
        retryable: false,
        suggestedAction:
          'Correct the named fields (address_check.normalized shows the address the USPS way), or send without strict_address to mail it as written.',
      },
    );
  }
  return check;
}

/** The check's dry-run warnings, one per problem, in the shape of the other dry-run warnings. */
export function addressDryRunWarnings(check: AddressCheck): Record<string, unknown>[] {
  const shown = check.warnings.filter((w) => w.code !== 'not_checked');
  // addressCheckWarnings words each line and drops the same 'not_checked' warning, so the two lists align.
  return addressCheckWarnings(check).map((message, i) => ({
    code: 'recipient_address',
    message,
    check_code: shown[i].code,
    field: REQUEST_FIELD[shown[i].field],
    deliverability: check.deliverability,
  }));
}

/** The stored check in its own key order (jsonb sorts keys), or null for pieces from before it existed. */
export function storedAddressCheck(row: Pick<MailRow, 'address_check'>): AddressCheck | null {
  const c = row.address_check;
  if (!c) return null;
  return {
    deliverability: c.deliverability,
    normalized: {
      line1: c.normalized.line1,
      line2: c.normalized.line2,
      city: c.normalized.city,
      state: c.normalized.state,
      zip: c.normalized.zip,
    },
    changes: c.changes.map((x) => ({ field: x.field, from: x.from, to: x.to, reason: x.reason })),
    warnings: c.warnings.map((w) => ({ code: w.code, field: w.field, message: w.message })),
  };
}
