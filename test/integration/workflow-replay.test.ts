// Every recorded history in test/fixtures/histories replays against today's workflows
// without nondeterminism, so a workflow change that would break running workflows fails
// `npm test`. The histories come from `npm run histories:record` (test/histories), plus
// older ones kept for code that has since changed behind patched():
//   scan-bundle-workflow-before-context-outcome.json: an Open & Scan bundle of the code
//   that completed the operation at fulfilment (before 'scan-outcome-after-context').
//   outbound-mail-*.json but outbound-mail-print-proof.json: pieces recorded before their
//   workflow rendered a print proof (before 'render-print-proof').
// The guard itself is tested: a history replayed against a deliberately changed workflow
// fails with DeterminismViolationError.
import { DeterminismViolationError } from '@temporalio/workflow';
import { historyFiles, readHistory, replay, workflowTypeOf } from '../histories/history-files';

jest.setTimeout(180_000);

describe('recorded workflow histories', () => {
  const files = historyFiles();

  it('include one of every workflow shape the recorder makes', () => {
    for (const name of [
      'outbound-mail-approval',
      'outbound-mail-facility',
      'outbound-mail-print-proof',
      'batch-live',
      'batch-render',
      'mail-run',
      'handling-open-and-scan',
      'webhook-dispatch',
      'inbound-extraction',
      'outbound-mail-scheduled',
      'batch-scheduled',
      'owner-notifier',
    ]) {
      expect(files).toContain(`${name}.json`);
    }
  });

  it.each(files)("%s replays against today's workflows", async (file) => {
    const history = readHistory(file);
    expect(history.events?.length).toBeGreaterThan(2);
    await replay(history);
  });

  it('fail to replay against a workflow whose command sequence changed without patched()', async () => {
    const history = readHistory('scan-bundle.json');
    expect(workflowTypeOf(history)).toBe('scanBundleWorkflow');
    const changed = replay(history, { workflowsPath: require.resolve('../histories/changed-workflows') });
    await expect(changed).rejects.toBeInstanceOf(DeterminismViolationError);
    await expect(changed).rejects.toThrow(/nondeterminism/i);
  });
});
