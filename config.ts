// Runtime configuration: every setting comes from the environment, with defaults that
// match the local stack that `npm run dev` starts.
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BATCH_DRAFT_EXPIRY_SECONDS } from './domain/workflow-safe/batch-drafts';
import { MAIL_RUN_WINDOW_SECONDS } from './domain/workflow-safe/mail-runs';

export interface Config {
  port: number;
  host: string;
  siteUrl: string;
  baseUrl: string;
  apiPrefix: string;
  databaseUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
  temporalUiUrl: string;
  taskQueue: string;
  s3Endpoint: string;
  s3Bucket: string;
  s3Region: string;
  s3AccessKeyId: string;
  s3SecretAccessKey: string;
  webhooksAllowInsecureLocal: boolean;
  /** Buying credits with Stripe (services/billing/payments.ts). */
  stripe: StripeSettings;
  /** Email to owners: notifications, sign-up verification (services/notifications). */
  notifications: NotificationSettings;
  rateLimitPerMinute: number;
  signupRateLimitPerMinute: number;
  /**
   * OAUTH_REGISTRATION_RATE_LIMIT_PER_MINUTE: per client IP, OAuth client registrations
   * (POST /oauth/register) and fetches of client ID metadata documents, each counted apart.
   */
  oauthRegistrationRateLimitPerMinute: number;
  /**
   * RATE_LIMIT_WINDOW_SECONDS: the length of the fixed windows the rate limits count in (60:
   * the limits are per minute; only tests shorten it, so that a 429's Retry-After is short).
   */
  rateLimitWindowSeconds: number;
  logLevel: string;
  intakeSecret: string;
  smtpPort: number;
  /** Domain of the member-scoped intake aliases (`<local part>@<domain>`). */
  inboundEmailDomain: string;
  /** Largest accepted inbound email (raw RFC 822 bytes) on SMTP and the HTTP intake. */
  inboundMaxMessageBytes: number;
  /** The service owner's contact address, quoted in signup, waitlist and lead answers. */
  ownerEmail: string;
  /** base64 of 32 bytes: AES-256-GCM key for secrets stored at rest (webhook signing secrets, receiver tokens). */
  appEncryptionKey: string;
  /** First retry delay of webhook deliveries (doubles per attempt, capped, jittered). */
  webhookRetryBaseMs: number;
  /** A request (headers and body) must arrive within this, or the API answers 408 and closes the connection. */
  httpRequestTimeoutMs: number;
  /** The request headers must arrive within this (at most httpRequestTimeoutMs). */
  httpHeadersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (above a load balancer's idle timeout). */
  httpKeepAliveTimeoutMs: number;
  /** After SIGTERM/SIGINT, how long the API and SMTP intake let in-flight requests finish before closing their connections. */
  shutdownGraceSeconds: number;
  /** Bearer token that GET /metrics (Prometheus) requires; unset: /metrics is not served. */
  metricsToken: string | null;
  /**
   * How long a call from the API into a workflow (an Update, with the start a lost start
   * needs) waits for its answer; past it the API answers 503 WORKFLOW_UNAVAILABLE.
   */
  workflowUpdateDeadlineMs: number;
  /**
   * How long a batch draft waits for confirm before it is cancelled (the spec's 7 days).
   * The API starts each draft's workflow with it, so every API process shares one value.
   */
  batchDraftExpirySeconds: number;
  outboundMail: OutboundMailSettings;
  /**
   * MAIL_RUN_WINDOW_SECONDS: the window of Business mail runs opened from now on (the
   * spec's 300 s; only tests shorten it). A run keeps the window it opened with.
   */
  mailRunWindowSeconds: number;
  /** PREVIEW_CACHE_DIR: where rendered page images of outbound documents are cached (default: under the system temp directory). */
  previewCacheDir: string;
  /**
   * TRUST_PROXY=true: the API runs behind a proxy whose X-Forwarded-For and X-Forwarded-Proto
   * it believes (the per-IP signup limit, Secure console cookies behind TLS termination).
   */
  trustProxy: boolean;
  /** The console caches its compiled templates when NODE_ENV=production; elsewhere an edited template shows on the next request. */
  cacheConsoleTemplates: boolean;
  /**
   * The closed-workflow reconciler: runs every CLOSED_WORKFLOW_RECONCILE_EVERY_SECONDS (60) and
   * looks back CLOSED_WORKFLOW_LOOKBACK_HOURS (168) for runs closed while their record is open.
   */
  closedWorkflowReconciler: { everySeconds: number; lookbackHours: number };
  /** The Tesseract binary the OCR module runs (TESSERACT_PATH; default `tesseract`, found on the PATH). */
  tesseractPath: string;
  physicalInbound: PhysicalInboundSettings;
  worker: WorkerTuning;
  /** The letter renderers: Chromium for HTML and Markdown, LibreOffice for DOCX (services/shared/rendering/). */
  rendering: RenderingSettings;
}

/**
 * The letter renderers of one process (API or worker). The input and page bounds are the
 * product's (domain/outbound-mail/documents.ts); these are the machine's.
 */
export interface RenderingSettings {
  /** CHROMIUM_PATH: Debian's chromium (default /usr/bin/chromium). */
  chromiumPath: string;
  /**
   * RENDER_CHROMIUM_SANDBOX=true: run Chromium's own sandbox (needs a non-root user and user
   * namespaces on the host); off by default, since containers and root cannot use it.
   */
  chromiumSandbox: boolean;
  /** RENDER_HTML_CONCURRENCY: HTML renders at once, each in its own browser context (2). */
  htmlConcurrency: number;
  /** RENDER_HTML_TIMEOUT_MS: one HTML render, from loading the content to the PDF (20 s); past it the document is refused. */
  htmlTimeoutMs: number;
  /** SOFFICE_PATH: LibreOffice's soffice (default `soffice`, found on the PATH). */
  sofficePath: string;
  /** RENDER_DOCX_CONCURRENCY: DOCX conversions at once, each a LibreOffice process with its own profile (1). */
  docxConcurrency: number;
  /** RENDER_DOCX_TIMEOUT_MS: one DOCX conversion (60 s); past it LibreOffice is killed and the document refused. */
  docxTimeoutMs: number;
  /**
   * RENDER_QUEUE_WAIT_MS: how long a render waits for a free slot (30 s); past it, or with 32
   * already waiting, the request is answered 503 RENDERER_BUSY (retryable, nothing spent).
   */
  queueWaitMs: number;
}

/**
 * Outbound mail's workflow timings in seconds. The API starts piece workflows with the
 * approval timeout and the worker's reconciler too, so every process must agree on it.
 */
export interface OutboundMailSettings {
  /** MAIL_APPROVAL_TIMEOUT_SECONDS: how long a pending piece waits for approval before it is cancelled (30 days). */
  approvalTimeoutSeconds: number;
  /** MAIL_RECONCILE_EVERY_SECONDS: how often the reconciler of lost workflow starts runs (30). */
  reconcileEverySeconds: number;
  /** MAIL_RECONCILE_GRACE_SECONDS: how old an unstarted piece must be before the reconciler starts it (30). */
  reconcileGraceSeconds: number;
}

/** Physical inbound timings. */
export interface PhysicalInboundSettings {
  /** HANDLING_APPROVAL_TIMEOUT_SECONDS: how long a handling proposal waits for the owner before it is rejected as expired (14 days). */
  handlingApprovalTimeoutSeconds: number;
  /** INBOUND_RECONCILE_EVERY_SECONDS: how often the physical inbound reconciler runs (30; at least 1). */
  reconcileEverySeconds: number;
  /** INBOUND_RECONCILE_GRACE_SECONDS: how old an unstarted record must be before the reconciler starts its workflow (30). */
  reconcileGraceSeconds: number;
}

/** Worker slots and cache; unset slot counts keep the Temporal SDK's defaults. */
export interface WorkerTuning {
  maxConcurrentWorkflowTaskExecutions?: number;
  maxConcurrentActivityTaskExecutions?: number;
  maxConcurrentLocalActivityExecutions?: number;
  /**
   * Workflows kept in the sticky cache (default 200): the SDK's own default follows the heap
   * limit (2,310 workflows, ~450 MB when full), too much for a 512 MB container.
   */
  maxCachedWorkflows: number;
  /** After SIGTERM/SIGINT, how long in-flight activities may run before they are cancelled; the process exits at most 5 s later. */
  shutdownGraceSeconds: number;
  /** host:port where the worker serves the Temporal SDK's Prometheus metrics (/metrics); unset: not served. */
  metricsAddress: string | null;
  /**
   * WORKFLOW_BUNDLE_PATH: a prebuilt workflow bundle (worker/bundle-workflows.ts) to load;
   * unset: the worker builds one at start in a short-lived child process.
   */
  workflowBundlePath: string | null;
}

/** The worker's default sticky cache size (WORKER_MAX_CACHED_WORKFLOWS); see WorkerTuning. */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 200;

/** A whole number >= min from the environment; unset means `fallback`; anything else refuses to start. */
function wholeNumber<T extends number | undefined>(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: T,
  min = 1,
): number | T {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${name} must be a whole number >= ${min} (got ${JSON.stringify(value)})`);
  return n;
}

/** A whole number >= 1 from the environment; unset or anything else means `fallback` (these settings never refused to start). */
function positiveIntOr(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = env[name];
  const n = Number(value);
  return value !== undefined && Number.isInteger(n) && n >= 1 ? n : fallback;
}

export interface StripeSettings {
  secretKey: string;
  webhookSecret: string;
  /** STRIPE_API_BASE: another Stripe API than Stripe's own (stripe-mock locally); null = api.stripe.com. */
  apiBase: string | null;
  /**
   * The local checkout page stands in for Stripe's hosted one (and posts the signed events
   * Stripe would send): only outside production, with the Stripe API mocked.
   */
  localCheckout: boolean;
  /** Bounds of one purchase on the billing page, in cents (an automatic reload's amount too). */
  purchaseMinCents: number;
  purchaseMaxCents: number;
  /**
   * STRIPE_LOCAL_RELOAD_OUTCOME: with the local checkout only, what the local stand-in
   * tells the webhook about an automatic reload's charge (stripe-mock sends no events):
   * `succeeded` (default), `failed` (declined), or `none` (no event: tests sign their own).
   */
  localReloadOutcome: 'succeeded' | 'failed' | 'none';
  /**
   * The payments reconciler: every STRIPE_RECONCILE_EVERY_SECONDS (30) it starts the
   * workflows of recorded Stripe events and automatic reloads older than
   * STRIPE_RECONCILE_GRACE_SECONDS (60) that are still unapplied (a start that failed).
   */
  reconcileEverySeconds: number;
  reconcileGraceSeconds: number;
}

/**
 * LOCAL DEVELOPMENT ONLY: the published Stripe settings of the local stack (stripe-mock
 * accepts any key; the webhook secret signs the local checkout's events). Production
 * refuses to start with them or without the real ones.
 */
export const DEV_STRIPE_SECRET_KEY = 'sk_test_LocalPostalMailDevelopmentOnly';
export const DEV_STRIPE_WEBHOOK_SECRET = 'whsec_local_postal_mail_development_only';
/** Where `npm run dev` starts stripe-mock. */
export const DEV_STRIPE_API_BASE = 'http://127.0.0.1:12111';

function stripeSettings(env: NodeJS.ProcessEnv): StripeSettings {
  const production = env.NODE_ENV === 'production';
  const secretKey = env.STRIPE_SECRET_KEY || DEV_STRIPE_SECRET_KEY;
  const webhookSecret = env.STRIPE_WEBHOOK_SECRET || DEV_STRIPE_WEBHOOK_SECRET;
  if (production && (secretKey === DEV_STRIPE_SECRET_KEY || !/^(sk|rk)_(live|test)_/.test(secretKey)))
    throw new Error('STRIPE_SECRET_KEY (your Stripe secret or restricted key, sk_live_...) is required in production');
  if (production && (webhookSecret === DEV_STRIPE_WEBHOOK_SECRET || !webhookSecret.startsWith('whsec_')))
    throw new Error(
      "STRIPE_WEBHOOK_SECRET (the webhook endpoint's signing secret, whsec_...) is required in production",
    );
  const apiBase = (env.STRIPE_API_BASE ?? (production ? '' : DEV_STRIPE_API_BASE)).replace(/\/$/, '') || null;
  if (apiBase && !/^https?:\/\/[^/]+$/.test(apiBase))
    throw new Error(`STRIPE_API_BASE must be a scheme, host and port (got ${JSON.stringify(apiBase)})`);
  const purchaseMinCents = wholeNumber(env, 'CREDIT_PURCHASE_MIN_CENTS', 500);
  const purchaseMaxCents = wholeNumber(env, 'CREDIT_PURCHASE_MAX_CENTS', 500_000);
  if (purchaseMaxCents < purchaseMinCents)
    throw new Error('CREDIT_PURCHASE_MAX_CENTS must not be below CREDIT_PURCHASE_MIN_CENTS');
  const localReloadOutcome = env.STRIPE_LOCAL_RELOAD_OUTCOME || 'succeeded';
  if (localReloadOutcome !== 'succeeded' && localReloadOutcome !== 'failed' && localReloadOutcome !== 'none')
    throw new Error(
      `STRIPE_LOCAL_RELOAD_OUTCOME must be succeeded, failed or none (got ${JSON.stringify(localReloadOutcome)})`,
    );
  return {
    secretKey,
    webhookSecret,
    apiBase,
    localCheckout: !production && apiBase !== null,
    purchaseMinCents,
    purchaseMaxCents,
    localReloadOutcome,
    reconcileEverySeconds: wholeNumber(env, 'STRIPE_RECONCILE_EVERY_SECONDS', 30),
    reconcileGraceSeconds: wholeNumber(env, 'STRIPE_RECONCILE_GRACE_SECONDS', 60),
  };
}

export interface NotificationSettings {
  /** SMTP_URL: the relay every email leaves through (smtp:// or smtps://, credentials in the URL). */
  smtpUrl: string;
  /** MAIL_FROM: the From of every email, e.g. `Postal Mail <notifications@example.com>`. */
  mailFrom: string;
  /**
   * NOTIFICATION_DIGEST_WINDOW_SECONDS: after an email of a kind, further ones of that kind to
   * the same recipient wait this long and go out together as one digest (3600).
   */
  digestWindowSeconds: number;
  /** NOTIFICATION_APPROVAL_EXPIRY_NOTICE_SECONDS: how long before a pending approval expires its reminder goes out (48 hours). */
  approvalExpiryNoticeSeconds: number;
  /** NOTIFICATION_RECONCILE_EVERY_SECONDS: how often the notifications reconciler runs (60). */
  reconcileEverySeconds: number;
  /** EMAIL_LINK_HOURS: how long a sign-up verification or recipient confirmation link works (48). */
  emailLinkHours: number;
}

/** Where `npm run dev` starts Mailpit's SMTP server; the default SMTP_URL outside production. */
export const DEV_SMTP_URL = 'smtp://127.0.0.1:1025';
export const DEV_MAIL_FROM = 'Postal Mail <notifications@postal.localhost>';

/**
 * Production refuses to start without a relay and a sender of its own: a default would
 * send owners' approvals into nothing (or as an address no relay may send for).
 */
function notificationSettings(env: NodeJS.ProcessEnv): NotificationSettings {
  const production = env.NODE_ENV === 'production';
  if (production && !env.SMTP_URL)
    throw new Error(
      'SMTP_URL (the SMTP relay owners are emailed through, smtps://user:pass@host:465) is required in production',
    );
  if (production && !env.MAIL_FROM)
    throw new Error(
      'MAIL_FROM (the sender of owner emails, e.g. "Postal Mail <notifications@example.com>") is required in production',
    );
  const smtpUrl = env.SMTP_URL || DEV_SMTP_URL;
  let parsed: URL | null = null;
  try {
    parsed = new URL(smtpUrl);
  } catch {
    parsed = null;
  }
  if (!parsed || !['smtp:', 'smtps:'].includes(parsed.protocol) || !parsed.hostname)
    throw new Error('SMTP_URL must be smtp://host:port or smtps://host:port (credentials as user:pass@)');
  const mailFrom = (env.MAIL_FROM || DEV_MAIL_FROM).trim();
  if (!/^[^<>@\s]+@[^<>@\s]+$|<[^<>@\s]+@[^<>@\s]+>$/.test(mailFrom))
    throw new Error(`MAIL_FROM must be an address or "Name <address>" (got ${JSON.stringify(mailFrom)})`);
  return {
    smtpUrl,
    mailFrom,
    digestWindowSeconds: wholeNumber(env, 'NOTIFICATION_DIGEST_WINDOW_SECONDS', 3600),
    approvalExpiryNoticeSeconds: wholeNumber(env, 'NOTIFICATION_APPROVAL_EXPIRY_NOTICE_SECONDS', 48 * 3600),
    reconcileEverySeconds: wholeNumber(env, 'NOTIFICATION_RECONCILE_EVERY_SECONDS', 60),
    emailLinkHours: wholeNumber(env, 'EMAIL_LINK_HOURS', 48),
  };
}

function bool(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  return ['1', 'true', 'yes', 'on'].includes(value.toLowerCase());
}

/**
 * LOCAL DEVELOPMENT ONLY: the published default key for secrets at rest. Anyone can read
 * it here, so production (NODE_ENV=production) refuses to start without APP_ENCRYPTION_KEY.
 */
export const LOCAL_DEV_ENCRYPTION_KEY = 'bG9jYWwtZGV2LW9ubHktcG9zdGFsLW1haWwta2V5ISE=';

function encryptionKey(env: NodeJS.ProcessEnv): string {
  const value = env.APP_ENCRYPTION_KEY;
  if (!value) {
    if (env.NODE_ENV === 'production')
      throw new Error('APP_ENCRYPTION_KEY (base64 of 32 random bytes) is required in production');
    return LOCAL_DEV_ENCRYPTION_KEY;
  }
  if (Buffer.from(value, 'base64').length !== 32)
    throw new Error('APP_ENCRYPTION_KEY must be base64 of exactly 32 bytes');
  return value;
}

/** Webhooks to this machine over plain http are for tests and local receivers, never production. */
function insecureLocalWebhooks(env: NodeJS.ProcessEnv): boolean {
  const allowed = bool(env.WEBHOOKS_ALLOW_INSECURE_LOCAL, false);
  if (allowed && env.NODE_ENV === 'production') {
    throw new Error(
      'WEBHOOKS_ALLOW_INSECURE_LOCAL=true is refused when NODE_ENV=production: it lets webhooks reach this machine over plain http',
    );
  }
  return allowed;
}

/** The API's HTTP deadlines; the headers one cannot exceed the whole request's (Node refuses that). */
function httpTimeouts(env: NodeJS.ProcessEnv) {
  const httpRequestTimeoutMs = Number(env.HTTP_REQUEST_TIMEOUT_MS ?? 120_000);
  const httpHeadersTimeoutMs = Number(env.HTTP_HEADERS_TIMEOUT_MS ?? 20_000);
  const httpKeepAliveTimeoutMs = Number(env.HTTP_KEEP_ALIVE_TIMEOUT_MS ?? 65_000);
  for (const [name, value] of Object.entries({ httpRequestTimeoutMs, httpHeadersTimeoutMs, httpKeepAliveTimeoutMs })) {
    if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive number of milliseconds`);
  }
  if (httpHeadersTimeoutMs > httpRequestTimeoutMs)
    throw new Error('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  return { httpRequestTimeoutMs, httpHeadersTimeoutMs, httpKeepAliveTimeoutMs };
}

/** METRICS_TOKEN: long enough that guessing it is hopeless. */
function metricsToken(env: NodeJS.ProcessEnv): string | null {
  const value = env.METRICS_TOKEN;
  if (!value) return null;
  if (value.length < 24)
    throw new Error('METRICS_TOKEN must be at least 24 characters (or unset to not serve /metrics)');
  return value;
}

/** WORKER_METRICS_ADDRESS: host:port (or [ipv6]:port) for the worker's Prometheus exporter. */
function metricsAddress(env: NodeJS.ProcessEnv): string | null {
  const value = env.WORKER_METRICS_ADDRESS;
  if (!value) return null;
  if (!/^(\[[0-9a-fA-F:]+\]|[\w.-]+):\d{1,5}$/.test(value))
    throw new Error(`WORKER_METRICS_ADDRESS must be host:port (got ${JSON.stringify(value)})`);
  return value;
}

/**
 * The physical inbound timings. Unlike wholeNumber, a value that is not a whole number in
 * range falls back to its default instead of refusing to start: that is how these were
 * always read.
 */
function physicalInboundSettings(env: NodeJS.ProcessEnv): PhysicalInboundSettings {
  const approval = Number(env.HANDLING_APPROVAL_TIMEOUT_SECONDS);
  const seconds = (v: string | undefined, d: number) =>
    v !== undefined && v !== '' && Number.isInteger(Number(v)) && Number(v) >= 0 ? Number(v) : d;
  return {
    handlingApprovalTimeoutSeconds: Number.isInteger(approval) && approval >= 1 ? approval : 14 * 86400,
    reconcileEverySeconds: Math.max(1, seconds(env.INBOUND_RECONCILE_EVERY_SECONDS, 30)),
    reconcileGraceSeconds: seconds(env.INBOUND_RECONCILE_GRACE_SECONDS, 30),
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 3000);
  const host = env.HOST ?? '127.0.0.1';
  const siteUrl = (env.SITE_URL ?? `http://127.0.0.1:${port}`).replace(/\/$/, '');
  const apiPrefix = env.API_PREFIX ?? '/api';
  return {
    port,
    host,
    siteUrl,
    apiPrefix,
    baseUrl: (env.BASE_URL ?? `${siteUrl}${apiPrefix}`).replace(/\/$/, ''),
    databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postal_mail',
    temporalAddress: env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233',
    temporalNamespace: env.TEMPORAL_NAMESPACE ?? 'default',
    temporalUiUrl: env.TEMPORAL_UI_URL ?? 'http://127.0.0.1:8233',
    taskQueue: env.TEMPORAL_TASK_QUEUE ?? 'postal-mail',
    s3Endpoint: env.S3_ENDPOINT ?? 'http://127.0.0.1:9100',
    s3Bucket: env.S3_BUCKET ?? 'postal-mail',
    s3Region: env.S3_REGION ?? 'us-east-1',
    s3AccessKeyId: env.S3_ACCESS_KEY_ID ?? 'postal-local',
    s3SecretAccessKey: env.S3_SECRET_ACCESS_KEY ?? 'postal-local-secret',
    webhooksAllowInsecureLocal: insecureLocalWebhooks(env),
    rateLimitPerMinute: Number(env.RATE_LIMIT_PER_MINUTE ?? 100),
    signupRateLimitPerMinute: Number(env.SIGNUP_RATE_LIMIT_PER_MINUTE ?? 5),
    oauthRegistrationRateLimitPerMinute: wholeNumber(env, 'OAUTH_REGISTRATION_RATE_LIMIT_PER_MINUTE', 10),
    rateLimitWindowSeconds: wholeNumber(env, 'RATE_LIMIT_WINDOW_SECONDS', 60),
    logLevel: env.LOG_LEVEL ?? 'info',
    intakeSecret: env.INBOUND_INTAKE_SECRET ?? 'local-intake-secret',
    smtpPort: Number(env.SMTP_PORT ?? 2525),
    inboundEmailDomain: (env.INBOUND_EMAIL_DOMAIN ?? 'in.postal.localhost').toLowerCase(),
    inboundMaxMessageBytes: Number(env.INBOUND_MAX_MESSAGE_BYTES ?? 25 * 1024 * 1024),
    ownerEmail: env.OWNER_EMAIL ?? 'owner@postal-mail.example',
    appEncryptionKey: encryptionKey(env),
    webhookRetryBaseMs: Number(env.WEBHOOK_RETRY_BASE_MS ?? 1000),
    ...httpTimeouts(env),
    shutdownGraceSeconds: wholeNumber(env, 'SHUTDOWN_GRACE_SECONDS', 20, 0),
    metricsToken: metricsToken(env),
    workflowUpdateDeadlineMs: wholeNumber(env, 'WORKFLOW_UPDATE_DEADLINE_MS', 10_000, 100),
    batchDraftExpirySeconds: wholeNumber(env, 'BATCH_DRAFT_EXPIRY_SECONDS', BATCH_DRAFT_EXPIRY_SECONDS),
    outboundMail: {
      approvalTimeoutSeconds: wholeNumber(env, 'MAIL_APPROVAL_TIMEOUT_SECONDS', 30 * 86400),
      reconcileEverySeconds: wholeNumber(env, 'MAIL_RECONCILE_EVERY_SECONDS', 30),
      reconcileGraceSeconds: wholeNumber(env, 'MAIL_RECONCILE_GRACE_SECONDS', 30),
    },
    mailRunWindowSeconds: wholeNumber(env, 'MAIL_RUN_WINDOW_SECONDS', MAIL_RUN_WINDOW_SECONDS),
    previewCacheDir: env.PREVIEW_CACHE_DIR ?? path.join(tmpdir(), 'postal-mail-previews'),
    trustProxy: env.TRUST_PROXY === 'true',
    cacheConsoleTemplates: env.NODE_ENV === 'production',
    closedWorkflowReconciler: {
      everySeconds: positiveIntOr(env, 'CLOSED_WORKFLOW_RECONCILE_EVERY_SECONDS', 60),
      lookbackHours: positiveIntOr(env, 'CLOSED_WORKFLOW_LOOKBACK_HOURS', 168),
    },
    tesseractPath: env.TESSERACT_PATH ?? 'tesseract',
    physicalInbound: physicalInboundSettings(env),
    worker: {
      maxConcurrentWorkflowTaskExecutions: wholeNumber(env, 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS', undefined, 2),
      maxConcurrentActivityTaskExecutions: wholeNumber(env, 'WORKER_MAX_CONCURRENT_ACTIVITIES', undefined),
      maxConcurrentLocalActivityExecutions: wholeNumber(env, 'WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES', undefined),
      maxCachedWorkflows: wholeNumber(env, 'WORKER_MAX_CACHED_WORKFLOWS', DEFAULT_MAX_CACHED_WORKFLOWS, 0),
      shutdownGraceSeconds: wholeNumber(env, 'WORKER_SHUTDOWN_GRACE_SECONDS', 30, 0),
      metricsAddress: metricsAddress(env),
      workflowBundlePath: env.WORKFLOW_BUNDLE_PATH || null,
    },
    stripe: stripeSettings(env),
    rendering: {
      chromiumPath: env.CHROMIUM_PATH || '/usr/bin/chromium',
      chromiumSandbox: env.RENDER_CHROMIUM_SANDBOX === 'true',
      htmlConcurrency: wholeNumber(env, 'RENDER_HTML_CONCURRENCY', 2),
      htmlTimeoutMs: wholeNumber(env, 'RENDER_HTML_TIMEOUT_MS', 20_000),
      sofficePath: env.SOFFICE_PATH || 'soffice',
      docxConcurrency: wholeNumber(env, 'RENDER_DOCX_CONCURRENCY', 1),
      docxTimeoutMs: wholeNumber(env, 'RENDER_DOCX_TIMEOUT_MS', 60_000),
      queueWaitMs: wholeNumber(env, 'RENDER_QUEUE_WAIT_MS', 30_000),
    },
    notifications: notificationSettings(env),
  };
}

export const config: Config = loadConfig();
