// Bundles the workflows with webpack (the Temporal SDK's bundler) into one file, in a
// process of its own. The worker runs it as a short-lived child at start (worker/bundle.ts)
// so webpack never loads into the long-running worker: bundling in-process left ~26 MB of
// JS heap and ~90 MB of RSS behind for the worker's whole life. It also works as a build
// step: `npx tsx worker/bundle-workflows.ts <out.js>`, then start the worker with
// WORKFLOW_BUNDLE_PATH=<out.js> (the bundle must come from the same checkout).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

export const WORKFLOWS_PATH = path.join(__dirname, '..', 'workflows', 'index.ts');

/** Bundles `workflowsPath` (default: the project's workflows) and writes the bundle, with its inline source map, to `outPath`. */
export async function writeWorkflowBundle(outPath: string, workflowsPath = WORKFLOWS_PATH): Promise<void> {
  const noop = () => undefined;
  const logger = { trace: noop, debug: noop, info: noop, log: noop, warn: console.warn, error: console.error };
  const bundle = await bundleWorkflowCode({ workflowsPath, logger: logger as never });
  writeFileSync(outPath, bundle.code);
}

if (require.main === module) {
  const [outPath, workflowsPath] = process.argv.slice(2);
  if (!outPath) {
    console.error('usage: tsx worker/bundle-workflows.ts <out.js> [workflows module]');
    process.exit(2);
  }
  writeWorkflowBundle(path.resolve(outPath), workflowsPath ? path.resolve(workflowsPath) : undefined).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
