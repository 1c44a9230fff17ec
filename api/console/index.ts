// The owner console: server-rendered pages under /console on the same Koa app, for the
// account's human owner (approve, fund, review). Every page reads and changes things only
// through the REST route definitions (api/console/rest.ts), as the signed-in member's live
// member key would, so an object of another member is a 404 here exactly as over REST.
// /billing (the billing_url of every 402 and usage read) and the site root land here, and
// so do the pages behind links in emails (/email/..., /account/verify-email).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Router from '@koa/router';
import type { Context, Next } from 'koa';
import { ApiError } from '../../domain/shared/errors';
import type { Deps } from '../../services/shared/deps';
import { revokeConsoleSession } from '../../services/accounts/console-sessions';
import { applyRateLimit } from '../router';
import {
  checkCsrf,
  ConsolePage,
  cookieOptions,
  csrfFor,
  describeError,
  FormRefused,
  loadSession,
  pageFor,
  preSessionSecret,
  readForm,
  renderView,
  safeNext,
  SESSION_COOKIE,
} from './framework';
import type { AddPage, PageHandler } from './framework';
import { signInRoutes } from './pages/sign-in';
import { mailPages } from './pages/mail';
import { accountPages } from './pages/account';
import { inboundPages } from './pages/inbound';
import { webhookPages } from './pages/webhooks';
import { supportPages } from './pages/support';
import { oauthPages } from './pages/oauth';
import { emailLinkRoutes } from './pages/email-links';
import { notificationPages } from './pages/notifications';

export const CONSOLE_PATH = '/console';
const CSS = readFileSync(path.join(__dirname, 'assets', 'console.css'));

/**
 * A console page pulls its page images and stylesheet as requests of their own, so the
 * console's budget per member is a multiple of the API's per-key rate.
 */
const CONSOLE_RATE_MULTIPLE = 5;

export type { AddPage, PageHandler };

/** Only this origin; images also from the object store, whose signed URLs show facility photos and scans. */
function consolePolicy(deps: Deps): string {
  const store = new URL(deps.config.s3Endpoint).origin;
  return [
    "default-src 'none'",
    "style-src 'self'",
    `img-src 'self' data: ${store}`,
    // The buy form's 303 leads to Stripe's hosted checkout page.
    "form-action 'self' https://checkout.stripe.com",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function renderFailure(
  deps: Deps,
  ctx: Context,
  err: unknown,
  signedIn: boolean,
  extra: Record<string, unknown> = {},
): void {
  if (err instanceof FormRefused) {
    renderView(
      deps,
      ctx,
      'error',
      {
        error: { status: 403, title: 'Form refused', message: err.message, fields: [], action: null, code: 'csrf' },
        signedIn,
        ...extra,
      },
      403,
    );
    return;
  }
  if (err instanceof ApiError) {
    renderView(deps, ctx, 'error', { error: describeError(err), signedIn, ...extra }, err.status);
    return;
  }
  deps.log.error({ err, path: ctx.path }, 'console page failed');
  renderView(
    deps,
    ctx,
    'error',
    {
      error: {
        status: 500,
        title: 'Something went wrong',
        message: `The page could not be built. Reference: ${ctx.state.requestId}.`,
        fields: [],
        action: 'Try again in a moment.',
        code: null,
      },
      signedIn,
      ...extra,
    },
    500,
  );
}

export function consoleRoutes(deps: Deps): Router {
  const router = new Router();
  const policy = consolePolicy(deps);

  router.use(async (ctx: Context, next: Next) => {
    const consolePage =
      ctx.path === '/' ||
      ctx.path === '/billing' ||
      ctx.path === CONSOLE_PATH ||
      ctx.path.startsWith(`${CONSOLE_PATH}/`) ||
      ctx.path.startsWith('/email/') ||
      ctx.path === '/account/verify-email';
    if (consolePage) ctx.set('Content-Security-Policy', policy);
    try {
      await next();
    } catch (err) {
      // A refusal outside a page's own handling (a sign-in form over the size limit) is a page too, not the API's JSON.
      if (!consolePage || !(err instanceof ApiError)) throw err;
      const session = await loadSession(deps, ctx);
      renderFailure(deps, ctx, err, Boolean(session), session ? { session, csrf: csrfFor(session.csrfSecret) } : {});
    }
  });

  router.get('/', (ctx) => ctx.redirect(CONSOLE_PATH));
  // billing_url is {site}/billing#credits: to the credits section, through sign-in when needed
  // (a form's POST and its redirect would drop the fragment, so it is written out here).
  router.get('/billing', async (ctx) => {
    const target = `${CONSOLE_PATH}/billing#credits`;
    ctx.redirect(
      (await loadSession(deps, ctx)) ? target : `${CONSOLE_PATH}/sign-in?next=${encodeURIComponent(target)}`,
    );
  });
  router.get(`${CONSOLE_PATH}/assets/console.css`, (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = CSS;
  });

  signInRoutes(deps, router, { renderFailure: (ctx, err, extra) => renderFailure(deps, ctx, err, false, extra) });
  emailLinkRoutes(deps, router, { renderFailure: (ctx, err) => renderFailure(deps, ctx, err, false) });

  router.post(`${CONSOLE_PATH}/sign-out`, async (ctx) => {
    const session = await loadSession(deps, ctx);
    const form = await readForm(ctx);
    if (session) {
      try {
        checkCsrf(session.csrfSecret, form);
      } catch (err) {
        renderFailure(deps, ctx, err, true);
        return;
      }
      await revokeConsoleSession(deps, session.memberId, session.id);
    }
    ctx.cookies.set(SESSION_COOKIE, null, cookieOptions(ctx));
    ctx.redirect(`${CONSOLE_PATH}/sign-in?signed_out=1`);
  });

  const add: AddPage = (method, pagePath, handler) => {
    router[method](pagePath, async (ctx: Context) => {
      const session = await loadSession(deps, ctx);
      if (!session) {
        if (method === 'get') {
          ctx.redirect(`${CONSOLE_PATH}/sign-in?next=${encodeURIComponent(safeNext(ctx.url))}`);
        } else {
          renderView(
            deps,
            ctx,
            'sign-in',
            {
              csrf: csrfFor(preSessionSecret(ctx)),
              next: CONSOLE_PATH,
              error: 'Your session has ended. Sign in again, then repeat what you were doing.',
            },
            401,
          );
        }
        return;
      }
      try {
        await applyRateLimit(
          deps,
          ctx,
          `console:${session.memberId}`,
          CONSOLE_RATE_MULTIPLE * (session.auth.rateLimitPerMinute ?? deps.config.rateLimitPerMinute),
        );
        const form = method === 'post' ? await readForm(ctx) : new URLSearchParams();
        if (method === 'post') checkCsrf(session.csrfSecret, form);
        await handler(pageFor(deps, ctx, session, form));
      } catch (err) {
        renderFailure(deps, ctx, err, true, { session, csrf: csrfFor(session.csrfSecret) });
      }
    });
  };

  mailPages(add);
  accountPages(add, { localCheckout: deps.config.stripe.localCheckout });
  inboundPages(add);
  webhookPages(add);
  supportPages(add);
  oauthPages(deps, router, add);
  notificationPages(add);

  // Any other console path: a page in words, not the API's JSON.
  router.all(`${CONSOLE_PATH}/{*rest}`, async (ctx) => {
    const session = await loadSession(deps, ctx);
    renderView(
      deps,
      ctx,
      'error',
      {
        error: {
          status: 404,
          title: 'Not found',
          message: 'There is no such page.',
          fields: [],
          action: null,
          code: null,
        },
        signedIn: Boolean(session),
        ...(session ? { session, csrf: csrfFor(session.csrfSecret) } : {}),
      },
      404,
    );
  });
  return router;
}
