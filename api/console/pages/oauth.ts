// The OAuth authorization endpoint as a console page: an MCP host sends the owner here; the
// owner signs in as usual, reads who asks (the client's name and redirect host, marked
// unverified) and chooses the agent, environment, scopes and safeguards, then approves or
// denies. A request whose client or redirect URI cannot be trusted is shown, never
// redirected to; anything else goes back to the client's redirect URI as an RFC 6749
// error. The form carries the session's CSRF token; the page may not be framed, and its
// form may lead only to this console and to the one redirect URI of the request.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Deps } from '../../../services/shared/deps';
import { ApiError } from '../../../domain/shared/errors';
import { SCOPES, Scope } from '../../../domain/shared/access';
import { redirectHost, redirectWith } from '../../../domain/accounts/oauth';
import {
  approveAuthorization,
  assertConsentAllowed,
  AuthorizationParams,
  AuthorizationRefusal,
  CheckedAuthorization,
  checkAuthorizationRequest,
  ConsentProblem,
  denialRedirect,
  issuerOf,
  memberIsLiveCapable,
} from '../../../services/accounts/oauth';
import { csrfFor, describeError, formNumber, loadSession, pageFor, renderView, type ConsolePage } from '../framework';
import type { ConsoleSession } from '../../../services/accounts/console-sessions';
import type { AddPage } from '../framework';

import { AUTHORIZE_PATH } from '../../oauth/paths';

const PARAMS: Array<keyof AuthorizationParams> = [
  'response_type',
  'client_id',
  'redirect_uri',
  'state',
  'scope',
  'code_challenge',
  'code_challenge_method',
  'resource',
];

/** The authorization request's parameters from a query or form; a parameter sent twice counts as missing (RFC 6749 3.1). */
function paramsOf(get: (name: string) => string[]): AuthorizationParams {
  const out: AuthorizationParams = {};
  for (const name of PARAMS) {
    const values = get(name);
    if (values.length === 1 && values[0].length <= 4096 && !values[0].includes('\u0000')) out[name] = values[0];
  }
  return out;
}

const fromQuery = (ctx: Context) =>
  paramsOf((name) => {
    const v = ctx.query[name];
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  });

/** Percent-encodes everything but letters, digits and `-_.`, so the sign-in's `next` check accepts the URL. */
function strictEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function authorizeUrl(params: AuthorizationParams): string {
  const query = PARAMS.filter((k) => params[k] !== undefined)
    .map((k) => `${k}=${strictEncode(params[k]!)}`)
    .join('&');
  return `${AUTHORIZE_PATH}?${query}`;
}

/** The console's policy, with the form allowed to lead to the request's redirect URI (where the answer goes). */
function consentPolicy(ctx: Context, redirectUri: string): void {
  const target = new URL(redirectUri);
  const source = target.protocol === 'http:' || target.protocol === 'https:' ? target.origin : target.protocol;
  const current = ctx.response.get('Content-Security-Policy');
  ctx.set('Content-Security-Policy', current.replace(/form-action ([^;]*)/, `form-action $1 ${source}`));
}

function refusalPage(deps: Deps, ctx: Context, err: AuthorizationRefusal, session: ConsoleSession | null): void {
  renderView(
    deps,
    ctx,
    'oauth-refused',
    {
      title: 'Connection refused',
      error: err.error,
      description: err.message,
      signedIn: Boolean(session),
      ...(session ? { session, csrf: csrfFor(session.csrfSecret) } : {}),
    },
    err.status === 401 ? 400 : err.status,
  );
}

/** A refusal the client should hear goes back to its redirect URI; one it cannot be trusted with is shown. */
function refuseAuthorization(
  deps: Deps,
  ctx: Context,
  err: AuthorizationRefusal,
  session: ConsoleSession | null,
): void {
  if (!err.redirectUri) return refusalPage(deps, ctx, err, session);
  ctx.status = 303;
  ctx.redirect(
    redirectWith(err.redirectUri, {
      error: err.error,
      error_description: err.message,
      state: err.state,
      iss: issuerOf(deps),
    }),
  );
}

async function renderConsent(
  page: ConsolePage,
  checked: CheckedAuthorization,
  opts: { error?: string; chosen?: Record<string, unknown> } = {},
  status = 200,
): Promise<void> {
  const [agents, liveCapable] = await Promise.all([
    page.call<{ agents: Array<{ id: string; name: string; display_name: string | null }> }>('GET /v1/agents', {
      query: { limit: '100' },
    }),
    memberIsLiveCapable(page.deps.db, page.session.memberId),
  ]);
  consentPolicy(page.ctx, checked.redirectUri);
  const redirect = new URL(checked.redirectUri);
  page.render(
    'oauth-consent',
    {
      title: `Connect ${checked.client.clientName}`,
      client: checked.client,
      clientHost: checked.client.registration === 'metadata_document' ? new URL(checked.client.clientId).host : null,
      redirectUri: checked.redirectUri,
      redirectHost: redirectHost(checked.redirectUri),
      loopback: ['127.0.0.1', '[::1]', 'localhost'].includes(redirect.hostname),
      resource: checked.resource,
      mcpOnly: checked.resource.endsWith('/mcp'),
      requested: checked.requestedScopes,
      allScopes: SCOPES,
      agents: agents.agents,
      liveCapable,
      params: PARAMS.filter((k) => checked.params[k] !== undefined).map((k) => [k, checked.params[k]]),
      error: opts.error,
      chosen: opts.chosen ?? {},
    },
    status,
  );
}

export function oauthPages(deps: Deps, router: Router, add: AddPage): void {
  // GET first checks the request (so a bad client is refused before anyone signs in), then
  // sends a signed-out owner through sign-in and back.
  router.get(AUTHORIZE_PATH, async (ctx) => {
    const params = fromQuery(ctx);
    const session = await loadSession(deps, ctx);
    let checked: CheckedAuthorization;
    try {
      checked = await checkAuthorizationRequest(deps, params, ctx.ip);
    } catch (err) {
      if (err instanceof AuthorizationRefusal) return refuseAuthorization(deps, ctx, err, session);
      throw err;
    }
    if (!session) {
      ctx.redirect(`/console/sign-in?next=${encodeURIComponent(authorizeUrl(params))}`);
      return;
    }
    try {
      await renderConsent(pageFor(deps, ctx, session, new URLSearchParams()), checked);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      const d = describeError(err);
      renderView(deps, ctx, 'error', { error: d, signedIn: true }, d.status);
    }
  });

  add('post', AUTHORIZE_PATH, async (page) => {
    const form = page.form;
    const params = paramsOf((name) => form.getAll(name));
    let checked: CheckedAuthorization;
    try {
      checked = await checkAuthorizationRequest(page.deps, params, page.ctx.ip);
    } catch (err) {
      if (err instanceof AuthorizationRefusal) return refuseAuthorization(page.deps, page.ctx, err, page.session);
      throw err;
    }
    if (form.get('decision') !== 'approve') {
      page.ctx.status = 303;
      page.ctx.redirect(denialRedirect(page.deps, checked));
      return;
    }
    const chosen = {
      agent: form.get('agent') ?? '',
      agent_name: form.get('agent_name') ?? '',
      scopes: form.getAll('scopes'),
      environment: form.get('environment') ?? 'test',
      force_approval: form.get('force_approval') === 'on',
      max_daily_pieces: form.get('max_daily_pieces') ?? '',
    };
    const again = (error: string) => renderConsent(page, checked, { error, chosen }, 400);
    const scopes = chosen.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
    if (scopes.length !== chosen.scopes.length) return again('One of the chosen scopes does not exist.');
    if (chosen.environment !== 'test' && chosen.environment !== 'live') return again('Choose test or live.');
    const max = formNumber(chosen.max_daily_pieces);
    if (max !== undefined && (typeof max !== 'number' || max < 1 || max > 2_147_483_647))
      return again('Most pieces per 24 hours must be a whole number of at least 1, or empty for no limit.');
    let agentId = chosen.agent;
    try {
      // Refused choices create nothing, not even the new agent.
      await assertConsentAllowed(page.deps, page.session.memberId, checked, {
        scopes,
        environment: chosen.environment,
      });
      if (agentId === 'new') {
        const created = await page.call<{ id: string }>('POST /v1/agents', {
          body: { name: chosen.agent_name.trim() },
        });
        agentId = created.id;
        chosen.agent = agentId;
      }
      const target = await approveAuthorization(page.deps, page.session.memberId, checked, {
        agentId,
        scopes,
        environment: chosen.environment,
        forceApproval: chosen.force_approval,
        maxDailyPieces: (max as number | undefined) ?? null,
      });
      page.ctx.status = 303;
      page.ctx.redirect(target);
    } catch (err) {
      if (err instanceof ConsentProblem) return again(err.message);
      if (err instanceof ApiError) {
        const d = describeError(err);
        return again(
          [d.message, ...d.fields.map((f) => `${f.path === 'name' ? 'agent name' : f.path}: ${f.message}`)].join(' '),
        );
      }
      throw err;
    }
  });
}
