// The offline US address check (domain/outbound-mail/address-check.ts) run over a batch's
// valid recipients, summed up for the batch: how many read likely, doubtful or unknown,
// and the first doubtful rows with their warnings. Advice only: no row is skipped for it.
import { addressCheckWarnings, checkUsAddress } from '../outbound-mail/address-check';
import type { Recipient } from './recipients-csv';

/** Doubtful rows listed on the batch; the counts cover every row. */
export const DOUBTFUL_ROWS_SHOWN = 50;

export interface DoubtfulRow {
  /** The CSV row number the recipient came from (as skipped_rows numbers rows). */
  row: number;
  warnings: string[];
}

export interface BatchAddressCheck {
  likely: number;
  doubtful: number;
  unknown: number;
  doubtful_rows: DoubtfulRow[];
}

/** Checks every recipient as a US address; rows past the first DOUBTFUL_ROWS_SHOWN doubtful ones are counted only. */
export function checkBatchAddresses(recipients: readonly Recipient[]): BatchAddressCheck {
  const summary: BatchAddressCheck = { likely: 0, doubtful: 0, unknown: 0, doubtful_rows: [] };
  for (const r of recipients) {
    const check = checkUsAddress({
      line1: r.line1,
      line2: r.line2,
      city: r.city,
      state: r.state,
      zip: r.zip,
      country: 'US',
    });
    summary[check.deliverability] += 1;
    if (check.deliverability === 'doubtful' && summary.doubtful_rows.length < DOUBTFUL_ROWS_SHOWN) {
      summary.doubtful_rows.push({ row: r.row, warnings: addressCheckWarnings(check) });
    }
  }
  return summary;
}
