// Pages behind the links in emails, used without signing in: the signed token in the
// link is the authority, so their forms carry no CSRF token (RFC 8058's one-click POST
// from a mail client carries none either). A GET only shows what the link will do and a
// button; the POST does it, so a mail scanner that fetches links changes nothing.
//   /email/unsubscribe    switch one kind off for one recipient (each click works)
//   /email/confirm        an extra recipient confirms it wants notifications (once)
//   /account/verify-email a new account's address is verified (once)
import type Router from '@koa/router';
import type { Context } from 'koa';
import type { Deps } from '../../../services/shared/deps';
import { ApiError } from '../../../domain/shared/errors';
import { applyRateLimit } from '../../router';
import { readForm, renderView } from '../framework';
import { confirmRecipient, unsubscribe, unsubscribeTarget } from '../../../services/notifications/settings';
import { verifyEmail } from '../../../services/accounts/email-verification';

interface Hooks {
  renderFailure(ctx: Context, err: unknown): void;
}

interface LinkPage {
  title: string;
  message: string;
  detail?: string;
  /** A button that POSTs the token back. */
  button?: string;
  token?: string;
  action?: string;
  error?: boolean;
  links?: Array<{ href: string; label: string }>;
}

const tokenOf = (ctx: Context, form?: URLSearchParams): string =>
  (form?.get('token') ?? (typeof ctx.query.token === 'string' ? ctx.query.token : '')).trim();

export function emailLinkRoutes(deps: Deps, router: Router, hooks: Hooks): void {
  const show = (ctx: Context, p: LinkPage, status = 200) => renderView(deps, ctx, 'email-link', { ...p }, status);
  /** A refused link is a page in words; anything else is the console's failure page. */
  const guarded = (handler: (ctx: Context) => Promise<void>) => async (ctx: Context) => {
    try {
      await applyRateLimit(deps, ctx, `ip:email-links:${ctx.ip}`, deps.config.rateLimitPerMinute);
      await handler(ctx);
    } catch (err) {
      if (err instanceof ApiError) {
        show(ctx, { title: 'This link cannot be used', message: err.message, error: true }, err.status);
        return;
      }
      hooks.renderFailure(ctx, err);
    }
  };
  const settingsLink = { href: '/console/notifications', label: 'Notification settings (sign-in needed)' };

  router.get(
    '/email/unsubscribe',
    guarded(async (ctx) => {
      const t = await unsubscribeTarget(deps, tokenOf(ctx));
      show(ctx, {
        title: 'Stop these emails?',
        message: t.alreadyOff
          ? `${t.email} is already not emailed when: ${t.label.charAt(0).toLowerCase()}${t.label.slice(1)}.`
          : `${t.email} will no longer be emailed when: ${t.label.charAt(0).toLowerCase()}${t.label.slice(1)}.`,
        detail: 'Other kinds of email are not affected. The account owner can switch it on again in the console.',
        button: t.alreadyOff ? undefined : 'Unsubscribe',
        token: tokenOf(ctx),
        action: '/email/unsubscribe',
        links: [settingsLink],
      });
    }),
  );

  // The confirm page's button, and a mail client's one-click POST (body List-Unsubscribe=One-Click, token in the URL).
  router.post(
    '/email/unsubscribe',
    guarded(async (ctx) => {
      const form = await readForm(ctx);
      const t = await unsubscribe(deps, tokenOf(ctx, form.has('token') ? form : undefined));
      show(ctx, {
        title: 'Unsubscribed',
        message: `${t.email} is no longer emailed when: ${t.label.charAt(0).toLowerCase()}${t.label.slice(1)}.`,
        links: [settingsLink],
      });
    }),
  );

  router.get(
    '/email/confirm',
    guarded(async (ctx) => {
      show(ctx, {
        title: 'Confirm notifications',
        message: 'Confirm that this address should be emailed about the Postal Mail account that added it.',
        detail: 'The link works once. If you do not know why you received it, close this page: nothing is sent.',
        button: 'Confirm',
        token: tokenOf(ctx),
        action: '/email/confirm',
      });
    }),
  );

  router.post(
    '/email/confirm',
    guarded(async (ctx) => {
      const form = await readForm(ctx);
      const r = await confirmRecipient(deps, tokenOf(ctx, form));
      show(ctx, {
        title: 'Confirmed',
        message: `${r.email} will be emailed what the account owner chose. Every email has a link to stop its kind.`,
      });
    }),
  );

  router.get(
    '/account/verify-email',
    guarded(async (ctx) => {
      const token = tokenOf(ctx);
      if (!token) {
        show(ctx, {
          title: 'Verify your email address',
          message:
            'Open the link in the email sent to your sign-up address. It works once and expires; nothing else is needed here.',
        });
        return;
      }
      show(ctx, {
        title: 'Verify your email address',
        message: 'Confirm that this address belongs to you.',
        button: 'Verify my email address',
        token,
        action: '/account/verify-email',
      });
    }),
  );

  router.post(
    '/account/verify-email',
    guarded(async (ctx) => {
      const form = await readForm(ctx);
      const v = await verifyEmail(deps, tokenOf(ctx, form));
      show(ctx, {
        title: 'Email address verified',
        message: `${v.email} is verified. The next steps are identity verification and a payment method; your agent can follow your progress${v.leadId ? ' at its status URL' : ''}.`,
      });
    }),
  );
}
