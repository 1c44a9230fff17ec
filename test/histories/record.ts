// `npm run histories:record`: runs the scenarios of test/histories/scenarios.ts against
// the test stack and writes each finished workflow's history to
// test/fixtures/histories/<name>.json. Files that exist are kept, never overwritten: they
// stand for workflows that may still be running on older code. A scenario runs only when
// one of its files is missing. Not matched by the normal test run (not a *.test.ts).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { startTestApp, TestApp } from '../helpers/app';
import { createFacility } from '../../services/accounts/accounts';
import { SCENARIOS, ScenarioContext } from './scenarios';
import { HISTORIES_DIR, replay, workflowTypeOf, writeHistory } from './history-files';

jest.setTimeout(300_000);

const fileOf = (name: string) => path.join(HISTORIES_DIR, `${name}.json`);

/** Waits until the workflow is no longer running (completed, or ended some other way). */
async function closed(app: TestApp, workflowId: string, timeoutMs = 180_000): Promise<string> {
  const handle = app.deps.temporal.workflow.getHandle(workflowId);
  const until = Date.now() + timeoutMs;
  for (;;) {
    const status = (await handle.describe()).status.name;
    if (status !== 'RUNNING') return status;
    if (Date.now() > until) throw new Error(`${workflowId} is still running after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('recording workflow histories', () => {
  let ctx: ScenarioContext;
  beforeAll(async () => {
    const app = await startTestApp({ env: { WEBHOOK_RETRY_BASE_MS: '50', NOTIFICATION_DIGEST_WINDOW_SECONDS: '2' } });
    const facility = await createFacility(app.deps, 'Recording Facility');
    // Live pieces and batches go to the oldest active facility: make it this one.
    await app.deps.db.query(`UPDATE facilities SET created_at = '2000-01-01' WHERE id = $1`, [facility.facility_id]);
    ctx = { app, facility };
  });
  afterAll(async () => {
    await ctx?.app.close();
  });

  it.each(SCENARIOS.map((s) => [s.files.join(', '), s] as const))('%s', async (_label, scenario) => {
    if (scenario.files.every((f) => existsSync(fileOf(f)))) {
      console.log(`[histories] kept ${scenario.files.join(', ')} (recorded before)`);
      return;
    }
    const started = Date.now();
    const made = await scenario.run(ctx);
    for (const name of scenario.files) {
      if (existsSync(fileOf(name))) continue;
      const workflowId = made[name];
      if (!workflowId) throw new Error(`the scenario made no workflow for ${name}`);
      const status = await closed(ctx.app, workflowId);
      if (status !== 'COMPLETED') throw new Error(`${workflowId} ended ${status}, not COMPLETED`);
      const history = await ctx.app.deps.temporal.workflow.getHandle(workflowId).fetchHistory();
      // A history that does not replay against the code that made it is no use as a fixture.
      await replay(history);
      const bytes = writeHistory(`${name}.json`, history);
      console.log(
        `[histories] ${name}.json: ${workflowTypeOf(history)}, ${history.events?.length} events, ${bytes} bytes, ${Date.now() - started} ms`,
      );
    }
  });
});
