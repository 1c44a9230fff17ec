// The worker never bundles its workflows in its own process: without a prebuilt bundle it
// builds one in a short-lived child (worker/bundle.ts). That bundle is a working one (a
// recorded history replays against it) and its temporary file goes once released.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { bundleInChildProcess } from '../../worker/bundle';
import { WORKFLOWS_PATH } from '../../worker/bundle-workflows';
import { readHistory, replay } from '../histories/history-files';

jest.setTimeout(180_000);

describe('workflow bundle built in a child process', () => {
  it('replays a recorded history and is deleted when released', async () => {
    const bundle = await bundleInChildProcess(WORKFLOWS_PATH);
    try {
      expect(existsSync(bundle.codePath)).toBe(true);
      await replay(readHistory('scan-bundle.json'), { workflowBundle: { codePath: bundle.codePath } });
    } finally {
      bundle.release();
    }
    expect(existsSync(path.dirname(bundle.codePath))).toBe(false);
  });

  it("fails with the bundler's exit status when the workflows do not build", async () => {
    const missing = path.join(__dirname, 'no-such-workflows.ts');
    await expect(bundleInChildProcess(missing)).rejects.toThrow(/bundling the workflows .* failed: exit 1/);
  });
});
