// `npm test`: type-checks, starts (or reuses) a test stack on free ports under
// .data/test, creates a throwaway database, bundles the workflows once, and runs every
// Jest test. Extra arguments go to Jest (`npm test -- test/unit`). With CI=true the test
// stack is stopped at the end; otherwise it keeps running so the next run starts fast.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config';
import { dropDatabase, ensureStack, ROOT, stopStack } from './stack';

async function main() {
  const jestArgs = process.argv.slice(2);
  const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

  if (process.env.SKIP_TYPECHECK !== '1') {
    console.log('[test] type-checking ...');
    const tsc = spawnSync(bin('tsc'), ['--noEmit', '-p', path.join(ROOT, 'tsconfig.json')], { stdio: 'inherit' });
    if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  }

  const base = loadConfig({ ...process.env, PORT: '0' });
  const runId = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const dbUrl = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postal_test');
  dbUrl.pathname = `/postal_test_${runId}`;
  const databaseUrl = dbUrl.toString();

  const { state } = await ensureStack({
    profile: 'test',
    databaseUrl,
    temporalAddress: process.env.TEST_TEMPORAL_ADDRESS,
    s3Endpoint: process.env.TEST_S3_ENDPOINT,
    s3Bucket: 'postal-mail-test',
    s3AccessKeyId: base.s3AccessKeyId,
    s3SecretAccessKey: base.s3SecretAccessKey,
    s3Region: base.s3Region,
    detached: true,
  });

  // One workflow bundle per run; every test worker loads it instead of re-bundling.
  const bundleDir = path.join(ROOT, '.data', 'test', 'bundles');
  mkdirSync(bundleDir, { recursive: true });
  const bundlePath = path.join(bundleDir, `workflows-${runId}.js`);
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  const { writeFileSync } = await import('node:fs');
  const bundle = await bundleWorkflowCode({ workflowsPath: path.join(ROOT, 'workflows', 'index.ts'), logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } as never });
  writeFileSync(bundlePath, bundle.code);

  const env = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: state.temporal.address,
    S3_ENDPOINT: state.s3.endpoint,
    S3_BUCKET: 'postal-mail-test',
    TEMPORAL_TASK_QUEUE: `test-${runId}`,
    WORKFLOW_BUNDLE_PATH: bundlePath,
    WEBHOOKS_ALLOW_INSECURE_LOCAL: 'true',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
  };
  console.log(`[test] Temporal ${state.temporal.address}, object store ${state.s3.endpoint}, database ${dbUrl.pathname.slice(1)}`);
  const jest = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'), '--config', path.join(ROOT, 'jest.config.js'), ...jestArgs], { stdio: 'inherit', env });

  rmSync(bundlePath, { force: true });
  if (process.env.KEEP_TEST_DB !== '1') await dropDatabase(databaseUrl);
  if (process.env.CI === 'true') stopStack('test');
  process.exit(jest.status ?? 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
