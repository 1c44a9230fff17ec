// A fixed number of render slots with a bounded queue in front of them, one per renderer
// and process: at most `size` renders run at once, at most `maxQueue` wait, and none waits
// longer than `waitMs`. A render that cannot get a slot is the machine's load, not the
// document's fault, so it is a 503 the caller may retry (nothing was stored or spent).
import { ApiError, errors } from '../../../domain/shared/errors';

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class RenderSlots {
  private active = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    readonly size: number,
    private readonly maxQueue: number,
    private readonly waitMs: number,
    /** What the slots render, for the refusal: "HTML renderer", "DOCX converter". */
    private readonly what: string,
  ) {}

  /** Renders now running. */
  get running(): number {
    return this.active;
  }

  async run<T>(render: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await render();
    } finally {
      this.release();
    }
  }

  private busy(detail: string): ApiError {
    return errors.unavailable('RENDERER_BUSY', `The ${this.what} is busy (${detail}); nothing was stored or charged.`, {
      suggestedAction: 'Retry the same request in a few seconds.',
    });
  }

  private acquire(): Promise<void> {
    if (this.active < this.size) {
      this.active++;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.maxQueue)
      return Promise.reject(this.busy(`${this.waiting.length} documents already wait`));
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = this.waiting.indexOf(waiter);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(this.busy(`no free slot within ${Math.round(this.waitMs / 1000)} s`));
        }, this.waitMs),
      };
      this.waiting.push(waiter);
    });
  }

  /** Hands the slot to the next waiter, or frees it. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) {
      clearTimeout(next.timer);
      next.resolve();
    } else {
      this.active--;
    }
  }

  /** Refuses every waiting render (the process is shutting down). */
  drain(): void {
    for (const waiter of this.waiting.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(this.busy('the process is shutting down'));
    }
  }
}
