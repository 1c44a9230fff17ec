// `npm test`: type-checks, lints, starts (or reuses) a test stack on free ports under
// .data/test, creates a throwaway database, bundles the workflows once, and runs every
// Jest test, then checks every response the tests received against the OpenAPI document
// (test/contract/). Extra arguments go to Jest (`npm test -- test/unit`). With CI=true the test
// stack is stopped at the end; otherwise it keeps running so the next run starts fast.
// `npm run test:cluster` (--cluster) runs against the cluster profile (scripts/cluster.ts)
// instead: the integration, e2e and fault suites, then the cluster's own fault tests
// (test/faults/cluster.test.ts) alone, since they kill Temporal services under every test.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../config';
import { dropDatabase, ensureStack, ROOT, stopStack } from './stack';
import { ensureCluster, stopCluster } from './cluster';

/**
 * The suites that run against the cluster. temporal-restart.test.ts is left out: it
 * restarts a dev server of its own, which says nothing about the cluster;
 * cluster.test.ts is its counterpart there.
 */
const CLUSTER_SUITES = [
  'test/integration',
  'test/e2e',
  'test/faults',
  '--testPathIgnorePatterns',
  'temporal-restart',
  'faults/cluster',
];
const CLUSTER_FAULTS = ['test/faults/cluster.test.ts', '--runInBand'];

async function main() {
  const cluster = process.argv.includes('--cluster');
  const jestArgs = process.argv.slice(2).filter((a) => a !== '--cluster');
  const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);

  if (process.env.SKIP_TYPECHECK !== '1') {
    console.log('[test] type-checking ...');
    const tsc = spawnSync(bin('tsc'), ['--noEmit', '-p', path.join(ROOT, 'tsconfig.json')], { stdio: 'inherit' });
    if (tsc.status !== 0) process.exit(tsc.status ?? 1);
  }
  if (process.env.SKIP_LINT !== '1') {
    console.log('[test] checking formatting (prettier --check, .prettierrc.json) ...');
    const format = spawnSync(bin('prettier'), ['--check', '--log-level', 'warn', ROOT], {
      stdio: 'inherit',
      cwd: ROOT,
    });
    if (format.status !== 0) process.exit(format.status ?? 1);
    console.log('[test] linting (eslint.config.mjs) ...');
    const lint = spawnSync(bin('eslint'), ['--max-warnings', '0', ROOT], { stdio: 'inherit', cwd: ROOT });
    if (lint.status !== 0) process.exit(lint.status ?? 1);
  }

  const base = loadConfig({ ...process.env, PORT: '0' });
  const runId = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const dbUrl = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postal_test');
  dbUrl.pathname = `/postal_test_${runId}`;
  const databaseUrl = dbUrl.toString();

  // The cluster profile is reused while it runs; only its Temporal and object store serve the tests.
  const clusterState = cluster ? (await ensureCluster({ detached: true, apps: true })).state : undefined;
  const { state } = await ensureStack({
    profile: cluster ? 'cluster' : 'test',
    databaseUrl,
    temporalAddress: clusterState?.frontendAddress ?? process.env.TEST_TEMPORAL_ADDRESS,
    s3Endpoint: clusterState?.s3Endpoint ?? process.env.TEST_S3_ENDPOINT,
    stripeApiBase: clusterState?.stripeApiBase ?? process.env.TEST_STRIPE_API_BASE,
    smtpUrl: clusterState?.smtpUrl ?? process.env.TEST_SMTP_URL,
    mailpitUrl: clusterState?.mailpitUrl ?? process.env.TEST_MAILPIT_URL,
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
  const bundle = await bundleWorkflowCode({
    workflowsPath: path.join(ROOT, 'workflows', 'index.ts'),
    logger: { trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error, log() {} } as never,
  });
  writeFileSync(bundlePath, bundle.code);

  const contractDir = process.env.CONTRACT_RECORD_DIR ?? path.join(ROOT, '.data', 'test', 'contract', `run-${runId}`);
  const env = {
    ...process.env,
    NODE_ENV: 'test',
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: state.temporal.address,
    S3_ENDPOINT: state.s3.endpoint,
    STRIPE_API_BASE: state.stripe.apiBase,
    SMTP_URL: state.mail.smtpUrl,
    MAILPIT_URL: state.mail.apiUrl,
    S3_BUCKET: 'postal-mail-test',
    TEMPORAL_TASK_QUEUE: `test-${runId}`,
    WORKFLOW_BUNDLE_PATH: bundlePath,
    WEBHOOKS_ALLOW_INSECURE_LOCAL: 'true',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    // Every response the tests' API servers answer is recorded here and checked against the
    // OpenAPI document when Jest ends (test/contract/teardown.ts). A directory given from outside
    // is kept, so records of several runs can be checked together; the run's own is removed.
    CONTRACT_RECORD_DIR: contractDir,
    // A full run also fails on operations and documented statuses that no test exercised.
    CONTRACT_FULL_RUN: process.env.CONTRACT_FULL_RUN ?? (!cluster && jestArgs.length === 0 ? '1' : '0'),
  };
  console.log(
    `[test] Temporal ${state.temporal.address}${cluster ? ' (cluster profile)' : ''}, object store ${state.s3.endpoint}, Stripe API ${state.stripe.apiBase}, email ${state.mail.apiUrl || state.mail.smtpUrl}, database ${dbUrl.pathname.slice(1)}`,
  );
  const jest = (args: string[], extraEnv: Record<string, string> = {}) =>
    spawnSync(
      process.execPath,
      [
        path.join(ROOT, 'node_modules', 'jest', 'bin', 'jest.js'),
        '--config',
        path.join(ROOT, 'jest.config.js'),
        ...args,
      ],
      { stdio: 'inherit', env: { ...env, ...extraEnv } },
    ).status ?? 1;

  let status: number;
  if (!cluster) status = jest(jestArgs);
  else if (jestArgs.length) status = jest(jestArgs, { TEST_CLUSTER: '1' });
  else {
    const suites = jest(CLUSTER_SUITES);
    console.log('[test] the cluster fault tests (alone: they kill Temporal services) ...');
    const faults = jest(CLUSTER_FAULTS, { TEST_CLUSTER: '1' });
    const figures = path.join(ROOT, '.data', 'cluster', 'fault-figures.json');
    if (existsSync(figures))
      console.log(`[test] cluster fault figures (${path.relative(ROOT, figures)}):\n${readFileSync(figures, 'utf8')}`);
    status = suites || faults;
  }

  rmSync(bundlePath, { force: true });
  if (!process.env.CONTRACT_RECORD_DIR) {
    const report = path.join(contractDir, 'report.json');
    if (existsSync(report)) renameSync(report, path.join(ROOT, '.data', 'test', 'contract', 'last-report.json'));
    rmSync(contractDir, { recursive: true, force: true });
  }
  if (process.env.KEEP_TEST_DB !== '1') await dropDatabase(databaseUrl);
  if (process.env.CI === 'true') {
    if (cluster) await stopCluster();
    else stopStack('test');
  }
  process.exit(status);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
