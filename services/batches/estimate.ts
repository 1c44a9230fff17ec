// Pricing a batch before anything is uploaded, and the two checks a draft must pass as
// well: the template's pages fit the mail type, marketing_mail has its minimum.
import type { AuthContext } from '../accounts/auth';
import { errors } from '../../domain/shared/errors';
import {
  BatchMailingClass,
  BatchMailType,
  describeAllowance,
  MARKETING_MAIL_MINIMUM,
  pageAllowance,
  pagesFit,
  priceBatch,
} from '../../domain/batches/pricing';

export interface EstimateInput {
  mail_type: BatchMailType;
  mailing_class: BatchMailingClass;
  quantity: number;
  page_count?: number;
  color: boolean;
  duplex: boolean;
}

export function assertPagesFit(mailType: BatchMailType, duplex: boolean, pageCount: number, path: string): void {
  if (!pagesFit(mailType, duplex, pageCount)) {
    throw errors.badRequest(
      'BATCH_TEMPLATE_PAGES_INVALID',
      `A ${pageCount}-page template does not fit: ${describeAllowance(mailType, duplex)}.`,
      {
        fields: [{ path, message: describeAllowance(mailType, duplex) }],
        suggestedAction:
          'Use a template whose page count fits the mail type, or pick another mail type (duplex doubles the pages of postcards, flyers and letters).',
        details: { page_count: pageCount, allowed: pageAllowance(mailType, duplex) },
      },
    );
  }
}

export function assertMarketingMinimum(mailingClass: BatchMailingClass, pieces: number, path: string): void {
  if (mailingClass === 'marketing_mail' && pieces < MARKETING_MAIL_MINIMUM) {
    throw errors.badRequest(
      'BATCH_MARKETING_MAIL_MINIMUM',
      `marketing_mail needs at least ${MARKETING_MAIL_MINIMUM} recipients; this batch has ${pieces}.`,
      {
        fields: [{ path, message: `at least ${MARKETING_MAIL_MINIMUM} for marketing_mail` }],
        suggestedAction: 'Add recipients or use mailing_class first_class.',
        details: { pieces, minimum: MARKETING_MAIL_MINIMUM },
      },
    );
  }
}

export function estimateBatch(auth: AuthContext, input: EstimateInput) {
  const pageCount = input.page_count ?? pageAllowance(input.mail_type, input.duplex).min;
  assertPagesFit(input.mail_type, input.duplex, pageCount, 'page_count');
  assertMarketingMinimum(input.mailing_class, input.quantity, 'quantity');
  const price = priceBatch({
    mailType: input.mail_type,
    mailingClass: input.mailing_class,
    pieces: input.quantity,
    pageCount,
    color: input.color,
    duplex: input.duplex,
  });
  return {
    estimate: {
      mail_type: input.mail_type,
      mailing_class: input.mailing_class,
      quantity: input.quantity,
      page_count: pageCount,
      color: input.color,
      duplex: input.duplex,
      ...price,
      credits_required_cents: auth.testMode ? 0 : price.total_cents,
      sandbox: auth.testMode,
    },
  };
}
