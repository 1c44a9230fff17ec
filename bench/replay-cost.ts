// CPU of a workflow's first task without the server: fetches the history of one workflow
// of the given type from the test stack's dev server (.data/test/stack.json; run a bench
// first so there are some), bundles the workflows the way the worker does and replays that
// history N times (Worker.runReplayHistories), printing the process's CPU per replay.
//   npx tsx bench/replay-cost.ts outboundMailWorkflow 300     (the real bundle)
//   npx tsx bench/replay-cost.ts benchNoopWorkflow 300        (bench/noop-workflow.ts)
// BENCH_REPLAY_PRELOAD=1 preloads the workflow-safe domain modules once per context
// (bundler preloadModules); BENCH_REPLAY_NO_PROMISE_HOOK=1 makes v8.promiseHooks
// unavailable to the SDK, which then skips its promise stack-trace tracking (an
// experiment: it shows what that tracking costs).
import 'reflect-metadata';
import path from 'node:path';
import v8 from 'node:v8';

if (process.env.BENCH_REPLAY_NO_PROMISE_HOOK === '1') {
  const hooks = (v8 as unknown as { promiseHooks: { createHook: (h: unknown) => unknown } }).promiseHooks;
  const createHook = hooks.createHook;
  // Only the SDK's call (vm-shared) is refused; Node's own async hooks still get theirs.
  hooks.createHook = (h) => {
    if (String(new Error().stack).includes('vm-shared'))
      throw new Error('promise hooks disabled by bench/replay-cost.ts');
    return createHook(h);
  };
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).includes('promiseHooks')) warn(...args);
  };
}

const WORKFLOW_SAFE_DOMAIN = ['handling', 'mail-rules', 'mail-runs', 'webhook-retry', 'us-states', 'visible-text'];

async function main() {
  const [type = 'outboundMailWorkflow', n = '300'] = process.argv.slice(2);
  const { Client, Connection } = await import('@temporalio/client');
  const { bundleWorkflowCode, DefaultLogger, Runtime, Worker } = await import('@temporalio/worker');
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const state = (await import(path.join(__dirname, '..', '.data', 'test', 'stack.json'))) as {
    temporal: { address: string };
  };
  const client = new Client({ connection: await Connection.connect({ address: state.temporal.address }) });
  let history: Awaited<ReturnType<ReturnType<typeof client.workflow.getHandle>['fetchHistory']>> | undefined;
  for await (const w of client.workflow.list({ query: `WorkflowType = "${type}"` })) {
    history = await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
    break;
  }
  if (!history) throw new Error(`no ${type} workflow on ${state.temporal.address}: run a bench first`);
  const workflowsPath =
    type === 'benchNoopWorkflow'
      ? path.join(__dirname, 'noop-workflow.ts')
      : path.join(__dirname, '..', 'workflows', 'index.ts');
  const preloadModules =
    process.env.BENCH_REPLAY_PRELOAD === '1'
      ? WORKFLOW_SAFE_DOMAIN.map((m) => path.join(__dirname, '..', 'domain', m))
      : [];
  const quiet = new DefaultLogger('ERROR');
  const bundle = await bundleWorkflowCode({
    workflowsPath,
    logger: quiet,
    ...(preloadModules.length ? { preloadModules } : {}),
  });
  const count = Number(n);
  const histories = async function* (k: number) {
    for (let i = 0; i < k; i++) yield { workflowId: `replay-${i}-${Math.random()}`, history: history! };
  };
  const replay = async (k: number) => {
    for await (const r of Worker.runReplayHistories({ workflowBundle: bundle }, histories(k)))
      if (r.error) throw r.error;
  };
  await replay(50); // warm-up
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const c0 = cpu();
  const t0 = performance.now();
  await replay(count);
  console.log(
    `${type}: ${history.events?.length} events, bundle ${(bundle.code.length / 1048576).toFixed(2)} MB: ` +
      `${((cpu() - c0) / count).toFixed(2)} ms CPU per replayed history, ${((performance.now() - t0) / count).toFixed(2)} ms wall`,
  );
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
