// One state-changing step at a time in a business workflow: its Update handlers, its
// cancellation-request path and its main flow's own steps all take turns here, in the
// order they asked (FIFO), so that, for example, a cancel arriving while a confirm is
// charging waits for it and then refunds what was charged. A turn is a plain promise
// chain: waiting for one schedules nothing, so it adds no command to the history.
import { CancellationScope } from '@temporalio/workflow';

/** Runs a step so that a cancellation request does not interrupt it (handlers run in the root scope, which the request cancels). */
export function shielded<T>(fn: () => Promise<T>): Promise<T> {
  return CancellationScope.nonCancellable(fn);
}

export interface ExclusiveTurns {
  /** A step holds a turn or waits for one: the main flow waits for this to clear before it ends. */
  readonly busy: boolean;
  /**
   * Runs `step` once every step asked for before it has settled, shielded from a
   * cancellation request. A step re-checks its guard inside its turn: the state may have
   * changed while it waited. A failed step fails only its own caller.
   */
  run<T>(step: () => Promise<T>): Promise<T>;
}

export function exclusiveTurns(): ExclusiveTurns {
  let queue: Promise<unknown> = Promise.resolve();
  let pending = 0;
  return {
    get busy() {
      return pending > 0;
    },
    run<T>(step: () => Promise<T>): Promise<T> {
      pending++;
      const turn = queue.then(() => shielded(step)).finally(() => pending--);
      queue = turn.catch(() => undefined);
      return turn;
    },
  };
}
