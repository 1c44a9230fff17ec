// Documented statuses that a test could produce but none does yet: known gaps of the contract
// check, printed on every full run (they do not fail it), to be moved out of here as tests reach
// them. A status no test can produce on demand belongs in test/contract/unproducible.ts instead.
// Each entry says what a test needs to produce the status. None is known now.

/** `METHOD /path/{template} STATUS` -> what a test needs to produce it. */
export const UNCOVERED: Record<string, string> = {};
