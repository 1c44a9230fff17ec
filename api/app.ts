// Composes the Koa application: middleware in the order request metrics, security headers,
// request id and log, X-Test-Mode marker (outside the error mapper so error bodies carry
// test_mode too), error mapper, then the site-root documents (with the liveness and
// readiness probes, /metrics when METRICS_TOKEN is set, and Stripe's webhook
// POST /webhooks/stripe), the API reference page, the OAuth endpoints (api/oauth), the
// console, the MCP and A2A servers and the REST router under the API prefix.
import Koa from 'koa';
import Router from '@koa/router';
import type { Deps } from '../services/shared/deps';
import { allRoutes } from './routes';
import { buildRouter } from './router';
import type { RouteDef } from './route';
import { errorMapper } from './middleware/errors';
import { requestContext, securityHeaders, testModeMarker } from './middleware/request-context';
import { buildOpenApi, openApiYaml } from './discovery/openapi';
import { checkHealth } from '../services/shared/health';
import { closeConnectionsWhileDraining, Lifecycle } from './lifecycle';
import { discoveryRoutes } from './discovery';
import { apiReferenceRoutes } from './discovery/api-reference';
import { mcpRoutes } from './mcp/http';
import { a2aRoutes } from './a2a/http';
import { consoleRoutes } from './console';
import { oauthRoutes } from './oauth';
import getRawBody from 'raw-body';
import { receiveStripeWebhook } from '../services/billing/payments';
import { httpMetrics, metricsEndpoint } from './metrics';

export function createApp(deps: Deps, routes: RouteDef[] = allRoutes, lifecycle = new Lifecycle()): Koa {
  const app = new Koa();
  app.proxy = deps.config.trustProxy;

  const site = new Router();
  // Built on first request (config.siteUrl may be set after start-up), then served as is.
  let openapi: Record<string, unknown> | undefined;
  let openapiJson: string | undefined;
  let openapiYamlText: string | undefined;
  const doc = () => (openapi ??= buildOpenApi(deps.config, routes));
  // Liveness: the process answers; no dependency is asked, so an outage elsewhere never gets it restarted.
  site.get('/livez', (ctx) => {
    ctx.body = { ok: true };
  });
  // Readiness (and /healthz, its older name): Postgres, Temporal and the object store answer and the process is not draining.
  const readiness: Koa.Middleware = async (ctx) => {
    const health = await checkHealth(deps);
    const ready = health.ok && !lifecycle.draining;
    ctx.status = ready ? 200 : 503;
    ctx.body = lifecycle.draining ? { ...health, ok: false, draining: true } : health;
  };
  site.get('/readyz', readiness);
  site.get('/healthz', readiness);
  // A string body, so the test_mode marker does not add a field the OpenAPI schema forbids.
  site.get('/openapi.json', (ctx) => {
    ctx.body = openapiJson ??= JSON.stringify(doc());
    ctx.type = 'application/json';
  });
  if (deps.config.metricsToken) site.get('/metrics', metricsEndpoint(deps.config.metricsToken));
  // Stripe's signed events (services/billing/payments.ts): the raw body, since the signature is over its bytes.
  site.post('/webhooks/stripe', async (ctx) => {
    const raw = await getRawBody(ctx.req, { length: ctx.get('content-length') || undefined, limit: '1mb' });
    const answer = await receiveStripeWebhook(deps, raw, ctx.get('stripe-signature') || undefined);
    ctx.status = answer.status;
    ctx.body = answer.body;
  });
  site.get('/openapi.yaml', (ctx) => {
    ctx.type = 'application/yaml';
    ctx.body = openapiYamlText ??= openApiYaml(doc());
  });

  const api = buildRouter(deps, routes);
  const prefixed = new Router({ prefix: deps.config.apiPrefix });
  prefixed.use(api.routes(), api.allowedMethods());

  app.use(closeConnectionsWhileDraining(lifecycle));
  app.use(httpMetrics());
  app.use(securityHeaders());
  app.use(requestContext(deps.log));
  app.use(testModeMarker());
  app.use(errorMapper(deps.log));
  app.use(site.routes());
  app.use(site.allowedMethods());
  const discovery = discoveryRoutes(deps, routes);
  app.use(discovery.routes());
  app.use(discovery.allowedMethods());
  const apiReference = apiReferenceRoutes(deps.config);
  app.use(apiReference.routes());
  app.use(apiReference.allowedMethods());
  const oauth = oauthRoutes(deps);
  app.use(oauth.routes());
  app.use(oauth.allowedMethods());
  app.use(consoleRoutes(deps).routes());
  const mcp = mcpRoutes(deps);
  app.use(mcp.routes());
  const a2a = a2aRoutes(deps);
  app.use(a2a.routes());
  app.use(prefixed.routes());
  app.use(prefixed.allowedMethods());
  return app;
}
