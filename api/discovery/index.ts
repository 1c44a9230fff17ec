// The site-root documents (agent card at both of its names, llms.txt, llms-full.txt, agents.txt, auth.md, OAuth
// metadata, with the MCP server's protected-resource metadata) and POST /agent/auth. Documents are built once per process from the route
// list, the access table and the MCP tool registry.
import Router from '@koa/router';
import type { Context } from 'koa';
import { errors } from '../../domain/shared/errors';
import type { Deps } from '../../services/shared/deps';
import { recordAgentAuthIntent } from '../../services/accounts/agent-auth';
import type { RegisteredTool } from '../mcp/registry';
import { registeredTools } from '../mcp/tools';
import type { RouteDef } from '../route';
import { BodyTooLargeError, JsonBodyError, readJsonBody } from '../json-body';
import { applyRateLimit, bodyTooLarge, parseOrThrow } from '../router';
import { renderAuthMd } from './auth-md';
import { AGENT_AUTH_PATH, DISCOVERY_DOCUMENTS } from './documents';
import {
  authorizationServerMetadata,
  buildAgentCard,
  mcpProtectedResourceMetadata,
  protectedResourceMetadata,
} from './metadata';
import { protectedResourceMetadataPath } from '../bearer-challenge';
import { AgentAuthRequest } from './surfaces';
import { renderAgentsTxt, renderLlmsFullTxt, renderLlmsTxt } from './text-documents';

/** An email, a name and a purpose of at most 1,000 characters. */
const AGENT_AUTH_BODY_LIMIT = 16 * 1024;

export function discoveryRoutes(deps: Deps, routes: RouteDef[], tools: RegisteredTool[] = registeredTools): Router {
  const { config } = deps;
  const builders: Record<string, () => string | object> = {
    agent_card: () => buildAgentCard(config),
    a2a_agent_card: () => buildAgentCard(config),
    llms_txt: () => renderLlmsTxt(config, tools),
    llms_full_txt: () => renderLlmsFullTxt(config, routes, tools),
    agents_txt: () => renderAgentsTxt(config, tools),
    auth_md: () => renderAuthMd(config),
    oauth_protected_resource: () => protectedResourceMetadata(config),
    oauth_authorization_server: () => authorizationServerMetadata(config),
  };
  const router = new Router();
  for (const doc of DISCOVERY_DOCUMENTS) {
    const build = builders[doc.key];
    // The OpenAPI documents are served next to /healthz in app.ts, the API reference by api-reference.ts.
    if (!build) continue;
    let cached: string | undefined;
    router.get(doc.path, (ctx) => {
      // Served as text so that the JSON documents stay exactly as built (no test_mode marker).
      cached ??= ((v) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2)))(build());
      ctx.body = cached;
      ctx.type = doc.contentType;
      ctx.set('Cache-Control', 'public, max-age=300');
    });
  }

  // The MCP server's own metadata (its path depends on the API prefix, so it is not in the static list).
  let mcpMetadata: string | undefined;
  router.get(protectedResourceMetadataPath(config, 'mcp'), (ctx) => {
    ctx.body = mcpMetadata ??= JSON.stringify(mcpProtectedResourceMetadata(config), null, 2);
    ctx.type = 'application/json';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Access-Control-Allow-Origin', '*');
  });

  router.post(AGENT_AUTH_PATH, async (ctx: Context) => {
    await applyRateLimit(deps, ctx, `ip:agent-auth:${ctx.ip}`, config.signupRateLimitPerMinute);
    let raw: unknown;
    try {
      raw = await readJsonBody(ctx, AGENT_AUTH_BODY_LIMIT);
    } catch (err) {
      if (err instanceof BodyTooLargeError) throw bodyTooLarge(err);
      if (err instanceof JsonBodyError) throw errors.validation([{ path: err.path, message: err.message }]);
      throw err;
    }
    const body = parseOrThrow(AgentAuthRequest, raw ?? {});
    ctx.status = 202;
    ctx.body = await recordAgentAuthIntent(deps, body, ctx.ip);
  });
  return router;
}
