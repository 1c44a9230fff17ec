// Recorded workflow histories (test/fixtures/histories/*.json): proto JSON as
// `History.toJSON()` writes it, read back with `History.fromObject` (the SDK's
// historyFromJSON fails under Jest's module registry).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker, type ReplayWorkerOptions } from '@temporalio/worker';

export const HISTORIES_DIR = path.join(__dirname, '..', 'fixtures', 'histories');

export type History = temporal.api.history.v1.IHistory;

/** Every recorded history file, by name. */
export function historyFiles(): string[] {
  return readdirSync(HISTORIES_DIR)
    .filter((f) => f.endsWith('.json'))
    .sort();
}

export function readHistory(file: string): temporal.api.history.v1.History {
  return temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.join(HISTORIES_DIR, file), 'utf8')));
}

export function writeHistory(file: string, history: History): number {
  const text = `${JSON.stringify(temporal.api.history.v1.History.fromObject(history).toJSON(), null, 1)}\n`;
  writeFileSync(path.join(HISTORIES_DIR, file), text);
  return Buffer.byteLength(text);
}

/** The workflow type a history started (its first event). */
export function workflowTypeOf(history: History): string {
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
}

/** Today's workflows: the run's bundle under `npm test`, else bundled from workflows/. */
export function currentWorkflows(): ReplayWorkerOptions {
  const bundlePath = process.env.WORKFLOW_BUNDLE_PATH;
  return bundlePath
    ? { workflowBundle: { codePath: bundlePath } }
    : { workflowsPath: require.resolve('../../workflows') };
}

/** Replays one history; throws DeterminismViolationError (or ReplayError) when the code no longer fits it. */
export async function replay(history: History, workflows: ReplayWorkerOptions = currentWorkflows()): Promise<void> {
  try {
    // Every replay starts and stops a worker, which the SDK logs at INFO by default.
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // Already installed in this process (by an earlier replay or the test app's worker).
  }
  await Worker.runReplayHistory(workflows, history);
}
