// Prometheus metrics of the API process: every request counted and timed by method, route
// template (the router's pattern, never the raw path, so the label set stays bounded) and
// status, plus prom-client's default process and Node.js metrics. GET /metrics serves them
// only when METRICS_TOKEN is set, and only to `Authorization: Bearer <METRICS_TOKEN>`.
import type Koa from 'koa';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import { safeEqual } from '../domain/accounts/keys';
import { errors } from '../domain/shared/errors';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const LABELS = ['method', 'route', 'status'] as const;

export interface ApiMetrics {
  registry: Registry;
  requests: Counter<(typeof LABELS)[number]>;
  duration: Histogram<(typeof LABELS)[number]>;
}

// One set per process: several apps in one process (tests) share it, as they share the process.
let shared: ApiMetrics | undefined;

export function apiMetrics(): ApiMetrics {
  if (shared) return shared;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  shared = {
    registry,
    requests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route template and status.',
      labelNames: LABELS,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from receiving a request to its handler finishing, by method, route template and status.',
      labelNames: LABELS,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
  };
  return shared;
}

/** The matched route's pattern (`/api/v1/mail/:id`); `unmatched` when no route took the request. */
function routeTemplate(ctx: Koa.Context): string {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  return typeof matched === 'string' ? matched : 'unmatched';
}

/** Counts and times every request; sits outside the error mapper, so the status is the one sent. */
export function httpMetrics(m = apiMetrics()): Koa.Middleware {
  return async (ctx, next) => {
    const stop = m.duration.startTimer();
    try {
      await next();
    } finally {
      const labels = {
        method: METHODS.has(ctx.method) ? ctx.method : 'OTHER',
        route: routeTemplate(ctx),
        status: String(ctx.status),
      };
      stop(labels);
      m.requests.inc(labels);
    }
  };
}

/** GET /metrics in the Prometheus text format, for the bearer of `token` only. */
export function metricsEndpoint(token: string, m = apiMetrics()): Koa.Middleware {
  return async (ctx) => {
    const given = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1] ?? '';
    if (!given) throw errors.unauthorized('token_missing', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>');
    if (!safeEqual(given, token)) throw errors.unauthorized('key_not_found', 'The metrics token is not valid');
    ctx.type = m.registry.contentType;
    ctx.body = await m.registry.metrics();
  };
}
