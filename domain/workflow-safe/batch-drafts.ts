// How long a batch draft waits for its confirmation: the spec's 7 days, unless
// BATCH_DRAFT_EXPIRY_SECONDS (config.ts) sets another default.
export const BATCH_DRAFT_EXPIRY_SECONDS = 7 * 24 * 3600;
