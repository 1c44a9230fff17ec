// The shape of a versioned postage rate table. A table is data only: prices in integer
// cents, weights in whole ounces (a piece's weight is rounded UP to the next ounce
// before a step is chosen). A new table gets a new name and a new file; the name is
// what cost_breakdown.rate_source reports, so a stored price can always be traced
// back to the table that produced it.
import type { MailClass } from '../mail-class';

/** Cents for zones 1 to 8, in that order. */
export type ZoneCents = readonly [number, number, number, number, number, number, number, number];

export interface RateStep {
  /** The step applies to pieces of at most this many whole ounces. */
  max_oz: number;
  cents: ZoneCents;
  /** Words for postage_description, e.g. "letter" or "large envelope". */
  label?: string;
}

export interface ClassRates {
  /** Service name for postage_description. */
  service: string;
  /** False when the price does not depend on the zone (First-Class Mail). */
  zoned: boolean;
  /** Ascending by max_oz. */
  steps: readonly RateStep[];
  /** Each ounce (or part) above the last step adds these cents, up to max_oz. */
  additional_oz?: { cents: ZoneCents; max_oz: number; label?: string };
  /** Fixed extra-service fees that are part of postage (certified, return receipt). */
  fees?: readonly { name: string; cents: number }[];
  /** Private carrier that quotes this class; null for postal classes. */
  carrier: 'carrierx' | 'carriery' | null;
}

export interface RateTable {
  name: string;
  /** Weight model, in hundredths of an ounce (integers keep the arithmetic exact). */
  envelope_weight_hundredths_oz: number;
  sheet_weight_hundredths_oz: number;
  classes: Readonly<Record<MailClass, ClassRates>>;
}
