// Retry timing of webhook deliveries: exponential backoff from a base delay, capped at
// 8x the base, with full jitter in the upper half so receivers recovering together are
// not hit at once. Pure (the workflow passes its deterministic random number).

export const MAX_ATTEMPTS = 5;
export const CONSECUTIVE_FAILURES_TO_PAUSE = 5;

/** Delay before attempt `nextAttempt` (2..5): base * 2^(n-2) capped at 8x, times 0.5..1. */
export function retryDelayMs(nextAttempt: number, baseMs: number, random: number): number {
  const exponential = Math.min(baseMs * 2 ** Math.max(0, nextAttempt - 2), baseMs * 8);
  return Math.round(exponential * (0.5 + random / 2));
}
