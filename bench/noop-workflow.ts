// The bench's baseline workflow (bench/baseline.ts): returns at once, so one execution is
// the least Temporal work a piece can cost: a start, one workflow task, the completion.
// Registered only by the bench's own worker process (bench/noop-worker.ts).
export async function benchNoopWorkflow(): Promise<void> {
  // Nothing: the point is what Temporal, the worker and the client spend around it.
}
