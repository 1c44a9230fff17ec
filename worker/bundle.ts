// Where the worker's workflow bundle comes from: a prebuilt file (WORKFLOW_BUNDLE_PATH, or
// the one `npm test` and the bench build once), else a short-lived child process that
// bundles the workflows into a temporary file (worker/bundle-workflows.ts).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const BUNDLER_SCRIPT = path.join(__dirname, 'bundle-workflows.ts');

export interface WorkflowBundleFile {
  codePath: string;
  /** Deletes the file if it was built for this start (Worker.create has read it by then). */
  release(): void;
}

/**
 * Bundles `workflowsPath` in a child process and returns the file it wrote. The child loads
 * TypeScript through tsx (named by file, so it does not depend on the working directory or
 * on how this process was started) and inherits the environment, NODE_OPTIONS included;
 * this process's own node flags (a --cpu-prof, say) are not passed on.
 */
export async function bundleInChildProcess(workflowsPath: string): Promise<WorkflowBundleFile> {
  const dir = mkdtempSync(path.join(tmpdir(), 'postal-workflows-'));
  const codePath = path.join(dir, 'workflows.js');
  const release = () => rmSync(dir, { recursive: true, force: true });
  try {
    const tsx = pathToFileURL(require.resolve('tsx')).href;
    const child = spawn(process.execPath, ['--import', tsx, BUNDLER_SCRIPT, codePath, workflowsPath], {
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-8192);
    });
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c, s) => resolve([c, s]));
    });
    if (code !== 0)
      throw new Error(`bundling the workflows (${BUNDLER_SCRIPT}) failed: exit ${code ?? signal}\n${stderr.trim()}`);
    // The bundler's warnings, if any, belong in this process's log.
    if (stderr) process.stderr.write(stderr);
  } catch (err) {
    release();
    throw err;
  }
  return { codePath, release };
}

/** The given bundle as it is (never deleted), or one built now in a child process. */
export async function workflowBundle(opts: {
  prebuiltPath: string | null;
  workflowsPath: string;
}): Promise<WorkflowBundleFile> {
  if (opts.prebuiltPath) return { codePath: opts.prebuiltPath, release: () => undefined };
  return bundleInChildProcess(opts.workflowsPath);
}
