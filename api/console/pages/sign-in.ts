// Signing in: paste a live member key once, or follow a one-time link from the operator
// CLI (a GET shows a button; only the form's POST uses the link, so a mail scanner that
// fetches the link does not spend it). Both forms carry a CSRF token made from a
// signed-out cookie's secret. Success sets the session cookie and returns to `next`.
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Deps } from '../../../services/shared/deps';
import { redeemSignInLink, signInWithMemberKey } from '../../../services/accounts/console-sessions';
import { applyRateLimit } from '../../router';
import {
  checkCsrf,
  cookieOptions,
  csrfFor,
  describeError,
  loadSession,
  preSessionSecret,
  readForm,
  renderView,
  safeNext,
  SESSION_COOKIE,
} from '../framework';
import { ApiError } from '../../../domain/shared/errors';

interface Hooks {
  renderFailure(ctx: Context, err: unknown, extra?: Record<string, unknown>): void;
}

export function signInRoutes(deps: Deps, router: Router, hooks: Hooks): void {
  const signInPage = (ctx: Context, data: Record<string, unknown>, status = 200) =>
    renderView(
      deps,
      ctx,
      'sign-in',
      { csrf: csrfFor(preSessionSecret(ctx)), next: safeNext(ctx.query.next), ...data },
      status,
    );

  router.get('/console/sign-in', async (ctx) => {
    const session = await loadSession(deps, ctx);
    if (session) {
      ctx.redirect(safeNext(ctx.query.next));
      return;
    }
    signInPage(ctx, { signedOut: ctx.query.signed_out === '1' });
  });

  router.post('/console/sign-in', async (ctx) => {
    const form = await readForm(ctx);
    const next = safeNext(form.get('next'));
    try {
      checkCsrf(preSessionSecret(ctx), form);
      await applyRateLimit(deps, ctx, `ip:console-sign-in:${ctx.ip}`, deps.config.rateLimitPerMinute);
      const key = form.get('key') ?? '';
      if (!key.trim()) {
        signInPage(ctx, { next, error: 'Paste your member key (it starts with sk_live_).' }, 400);
        return;
      }
      const { token, expiresAt } = await signInWithMemberKey(deps, key);
      ctx.cookies.set(SESSION_COOKIE, token, cookieOptions(ctx, expiresAt));
      ctx.redirect(next);
    } catch (err) {
      if (err instanceof ApiError) {
        const d = describeError(err);
        const words: Record<string, string> = {
          key_not_found: 'No key matches what you pasted. Check that you copied the whole key.',
          key_revoked: 'This key has been revoked. Sign in with an active member key.',
          key_expired: 'This key has expired. Sign in with an active member key.',
          member_suspended: 'This account is suspended.',
          token_malformed: 'That does not look like a key. Member keys start with sk_live_.',
          token_prefix_unknown: 'That does not look like a key. Member keys start with sk_live_.',
        };
        signInPage(ctx, { next, error: words[d.code ?? ''] ?? d.message }, err.status);
        return;
      }
      hooks.renderFailure(ctx, err);
    }
  });

  router.get('/console/sign-in/link', async (ctx) => {
    const token = typeof ctx.query.token === 'string' ? ctx.query.token : '';
    renderView(deps, ctx, 'sign-in-link', { csrf: csrfFor(preSessionSecret(ctx)), token });
  });

  router.post('/console/sign-in/link', async (ctx) => {
    const form = await readForm(ctx);
    try {
      checkCsrf(preSessionSecret(ctx), form);
      await applyRateLimit(deps, ctx, `ip:console-sign-in:${ctx.ip}`, deps.config.rateLimitPerMinute);
      const { token, expiresAt } = await redeemSignInLink(deps, form.get('token') ?? '');
      ctx.cookies.set(SESSION_COOKIE, token, cookieOptions(ctx, expiresAt));
      ctx.redirect('/console');
    } catch (err) {
      if (err instanceof ApiError) {
        renderView(
          deps,
          ctx,
          'sign-in-link',
          { csrf: csrfFor(preSessionSecret(ctx)), token: '', error: err.message },
          err.status,
        );
        return;
      }
      hooks.renderFailure(ctx, err);
    }
  });
}
