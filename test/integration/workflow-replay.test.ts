// Recorded histories of workflow code that has since changed replay against today's
// workflows without nondeterminism: the changes are behind patched().
//   scan-bundle-workflow-before-context-outcome.json: an Open & Scan bundle of the code
//   that completed the operation at fulfilment (before 'scan-outcome-after-context').
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';

jest.setTimeout(120_000);

const HISTORIES = path.join(__dirname, '..', 'fixtures', 'histories');

describe('recorded workflow histories', () => {
  it.each(['scan-bundle-workflow-before-context-outcome.json'])('%s replays', async (file) => {
    // Exported with fetchHistory() as proto JSON; fromObject reads it (the SDK's
    // historyFromJSON fails under Jest's module registry).
    const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8')));
    const bundlePath = process.env.WORKFLOW_BUNDLE_PATH;
    await Worker.runReplayHistory(
      bundlePath ? { workflowBundle: { codePath: bundlePath } } : { workflowsPath: require.resolve('../../workflows') },
      history,
    );
  });
});
