// Worker tuning and shutdown settings: read from the environment, refused when malformed,
// and passed to the Temporal Worker only when set (an unset knob keeps the SDK's default,
// except the workflow cache, which is 200 unless set).
import { loadConfig } from '../../config';
import { tuningOptions } from '../../worker/worker';

describe('worker tuning and shutdown settings', () => {
  it('leaves the SDK defaults alone when nothing is set, except a cache of 200 workflows', () => {
    const config = loadConfig({});
    expect(config.shutdownGraceSeconds).toBe(20);
    expect(tuningOptions(config.worker)).toEqual({
      maxCachedWorkflows: 200,
      shutdownGraceTime: 30000,
      shutdownForceTime: 35000,
    });
  });

  it('passes every knob that is set', () => {
    const config = loadConfig({
      WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '20',
      WORKER_MAX_CONCURRENT_ACTIVITIES: '50',
      WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: '30',
      WORKER_MAX_CACHED_WORKFLOWS: '0',
      WORKER_SHUTDOWN_GRACE_SECONDS: '0',
      SHUTDOWN_GRACE_SECONDS: '5',
    });
    expect(config.shutdownGraceSeconds).toBe(5);
    expect(tuningOptions(config.worker)).toEqual({
      maxConcurrentWorkflowTaskExecutions: 20,
      maxConcurrentActivityTaskExecutions: 50,
      maxConcurrentLocalActivityExecutions: 30,
      maxCachedWorkflows: 0,
      shutdownGraceTime: 0,
      shutdownForceTime: 5000,
    });
  });

  it.each([
    ['WORKER_MAX_CONCURRENT_ACTIVITIES', '0'],
    ['WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', '1'],
    ['WORKER_MAX_CACHED_WORKFLOWS', '-1'],
    ['WORKER_SHUTDOWN_GRACE_SECONDS', '2.5'],
    ['SHUTDOWN_GRACE_SECONDS', 'soon'],
  ])('refuses to start with %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});

describe('workflow bundle setting', () => {
  it('loads WORKFLOW_BUNDLE_PATH when set; unset (or empty) the worker builds its bundle at start', () => {
    expect(loadConfig({}).worker.workflowBundlePath).toBeNull();
    expect(loadConfig({ WORKFLOW_BUNDLE_PATH: '' }).worker.workflowBundlePath).toBeNull();
    expect(loadConfig({ WORKFLOW_BUNDLE_PATH: '/srv/postal/workflows.js' }).worker.workflowBundlePath).toBe(
      '/srv/postal/workflows.js',
    );
  });
});

describe('metrics settings', () => {
  it('serves no metrics unless asked', () => {
    const config = loadConfig({});
    expect([config.metricsToken, config.worker.metricsAddress]).toEqual([null, null]);
  });

  it('reads a long enough token and a host:port', () => {
    const config = loadConfig({ METRICS_TOKEN: 't'.repeat(24), WORKER_METRICS_ADDRESS: '0.0.0.0:9464' });
    expect([config.metricsToken, config.worker.metricsAddress]).toEqual(['t'.repeat(24), '0.0.0.0:9464']);
    expect(loadConfig({ WORKER_METRICS_ADDRESS: '[::1]:9464' }).worker.metricsAddress).toBe('[::1]:9464');
  });

  it.each([
    ['METRICS_TOKEN', 'short'],
    ['WORKER_METRICS_ADDRESS', '9464'],
    ['WORKER_METRICS_ADDRESS', 'http://0.0.0.0:9464'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});

describe('reconciler, proxy and console settings', () => {
  it('runs the closed-workflow reconciler every minute over a week unless set; values that are not whole numbers >= 1 keep the defaults', () => {
    expect(loadConfig({}).closedWorkflowReconciler).toEqual({ everySeconds: 60, lookbackHours: 168 });
    expect(
      loadConfig({ CLOSED_WORKFLOW_RECONCILE_EVERY_SECONDS: '15', CLOSED_WORKFLOW_LOOKBACK_HOURS: '24' })
        .closedWorkflowReconciler,
    ).toEqual({ everySeconds: 15, lookbackHours: 24 });
    expect(
      loadConfig({ CLOSED_WORKFLOW_RECONCILE_EVERY_SECONDS: '0', CLOSED_WORKFLOW_LOOKBACK_HOURS: '1.5' })
        .closedWorkflowReconciler,
    ).toEqual({ everySeconds: 60, lookbackHours: 168 });
  });

  it('trusts a proxy only on TRUST_PROXY=true and caches console templates only in production', () => {
    expect([
      loadConfig({}).trustProxy,
      loadConfig({ TRUST_PROXY: '1' }).trustProxy,
      loadConfig({ TRUST_PROXY: 'true' }).trustProxy,
    ]).toEqual([false, false, true]);
    const production = {
      NODE_ENV: 'production',
      APP_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
      STRIPE_SECRET_KEY: 'sk_live_TestOnlyNotARealKey',
      STRIPE_WEBHOOK_SECRET: 'whsec_TestOnlyNotARealSecret',
      SMTP_URL: 'smtps://relay.example.com:465',
      MAIL_FROM: 'Postal Mail <notifications@example.com>',
    };
    expect([
      loadConfig({ NODE_ENV: 'test' }).cacheConsoleTemplates,
      loadConfig(production).cacheConsoleTemplates,
    ]).toEqual([false, true]);
  });
});
