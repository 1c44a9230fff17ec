// Details a bench reports besides its metrics (per-piece statement lists, history event
// counts, profile summaries): bench/run.ts writes them to the results JSON under `details`.
export const benchDetails: Record<string, unknown> = {};
