// What every console page is made of: the session cookie, CSRF checks on every form, the
// urlencoded form reader, template rendering (Eta, escaped by default) and the rendering
// of refusals in words. Pages are server-rendered HTML with plain links and forms, so
// they need no script and work with a keyboard alone.
import path from 'node:path';
import type { Context } from 'koa';
import { Eta } from 'eta';
import { ApiError, codedError } from '../../domain/shared/errors';
import { formatCents } from '../../domain/shared/money';
import type { Deps } from '../../services/shared/deps';
import {
  ConsoleSession,
  csrfToken,
  csrfTokenValid,
  findConsoleSession,
  newCsrfSecret,
} from '../../services/accounts/console-sessions';
import { rest, RestCall } from './rest';
import { BodyTooLargeError, formatBytes, readBodyBytes } from '../json-body';
import { labelText, shownAddress, shownText } from './text';

export const SESSION_COOKIE = 'pm_console';
/** Signed-out forms (sign-in) take their CSRF token from this cookie's secret. */
const PRE_SESSION_COOKIE = 'pm_console_csrf';
/** Fits the largest console form, the instructions document (10,000 characters: at most 120 KB URL-encoded). */
export const FORM_LIMIT_BYTES = 256 * 1024;

/** Two engines, one caching compiled templates (config.cacheConsoleTemplates) and one re-reading them; each compiles only when used. */
const VIEWS = path.join(__dirname, 'views');
const cachingEta = new Eta({ views: VIEWS, cache: true, autoEscape: true });
const rereadingEta = new Eta({ views: VIEWS, cache: false, autoEscape: true });

/** Cookies are Secure when the site is served over https (directly or behind a proxy that says so). */
export function cookieOptions(ctx: Context, expires?: Date) {
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: ctx.secure,
    path: '/',
    overwrite: true,
    ...(expires ? { expires } : {}),
  };
}

export interface ConsolePage {
  deps: Deps;
  ctx: Context;
  session: ConsoleSession;
  /** Runs a REST route as the signed-in member (api/console/rest.ts) and answers its body. */
  call<T = Record<string, unknown>>(operation: string, call?: RestCall): Promise<T>;
  form: URLSearchParams;
  render(view: string, data?: Record<string, unknown>, status?: number): void;
}

export type PageHandler = (page: ConsolePage) => Promise<void>;
/** How a page module (pages/*.ts) adds its pages to the console router. */
export type AddPage = (method: 'get' | 'post', path: string, handler: PageHandler) => void;

/**
 * Helpers every template sees as `it.h`. Text the console did not write goes through
 * line (one-line text), text (several lines) or address, output raw (`<%~`): they escape it
 * and show hidden characters as marks (api/console/text.ts); label does the same as plain
 * text for attributes and titles.
 */
const helpers = {
  line: (v: unknown) => shownText(v, 'single_line'),
  text: (v: unknown) => shownText(v, 'multi_line'),
  label: labelText,
  address: shownAddress,
  money: (cents: number | null | undefined) => (cents === null || cents === undefined ? '—' : formatCents(cents)),
  date: (iso: string | null | undefined) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : '—'),
  words: (s: string | null | undefined) => (s ? s.replace(/_/g, ' ') : '—'),
  short: (id: string | null | undefined) => (id ? id.slice(0, 8) : '—'),
  qs: (base: Record<string, unknown>, change: Record<string, unknown>) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...base, ...change }))
      if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
    const s = p.toString();
    return s ? `?${s}` : '';
  },
};

export function renderView(deps: Deps, ctx: Context, view: string, data: Record<string, unknown>, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Cache-Control', 'no-store');
  const eta = deps.config.cacheConsoleTemplates ? cachingEta : rereadingEta;
  ctx.body = eta.render(view, { ...data, h: helpers, path: ctx.path });
}

/** The session of the request's cookie, or null. */
export async function loadSession(deps: Deps, ctx: Context): Promise<ConsoleSession | null> {
  return findConsoleSession(deps, ctx.cookies.get(SESSION_COOKIE));
}

/** The secret signed-out forms use: kept in its own cookie, made on first sight. */
export function preSessionSecret(ctx: Context): string {
  let secret = ctx.cookies.get(PRE_SESSION_COOKIE);
  if (!secret || !/^[A-Za-z0-9_-]{10,100}$/.test(secret)) {
    secret = newCsrfSecret();
    ctx.cookies.set(PRE_SESSION_COOKIE, secret, { ...cookieOptions(ctx), sameSite: 'strict' });
  }
  return secret;
}

export function csrfFor(secret: string): string {
  return csrfToken(secret);
}

/**
 * Reads an application/x-www-form-urlencoded body (the only kind console forms send). A body
 * over the limit is the REST 413 BODY_TOO_LARGE (read and thrown away, so the page reaches a
 * browser still sending), which the console shows as a page.
 */
export async function readForm(ctx: Context): Promise<URLSearchParams> {
  if (!ctx.is('application/x-www-form-urlencoded')) return new URLSearchParams();
  try {
    return new URLSearchParams((await readBodyBytes(ctx, FORM_LIMIT_BYTES)).toString('utf8'));
  } catch (err) {
    if (!(err instanceof BodyTooLargeError)) throw err;
    throw codedError(
      413,
      'BODY_TOO_LARGE',
      `The form sent was larger than the ${formatBytes(FORM_LIMIT_BYTES)} a console form may be, so nothing was done.`,
      { retryable: false, suggestedAction: 'Go back, shorten what you typed or pasted, and send the form again.' },
    );
  }
}

export class FormRefused extends Error {}

/** A form whose CSRF token does not match the secret is refused before anything happens. */
export function checkCsrf(secret: string, form: URLSearchParams): void {
  if (!csrfTokenValid(secret, form.get('_csrf'))) {
    throw new FormRefused(
      'This form has expired or did not come from this console. Go back, reload the page and try again.',
    );
  }
}

/** A refusal as words: the message, each field, and what to do next. */
export function describeError(err: ApiError): {
  status: number;
  title: string;
  message: string;
  fields: { path: string; message: string }[];
  action: string | null;
  code: string | null;
  body: Record<string, unknown>;
} {
  const body = err.toBody();
  const titles: Record<number, string> = {
    400: 'Some of what you entered cannot be used',
    401: 'Not signed in',
    402: 'Not enough credits',
    403: 'Not allowed',
    404: 'Not found',
    409: 'That cannot be done now',
    413: 'Too much was sent',
    422: 'Refused by a safeguard',
    429: 'Too many requests',
    503: 'Temporarily unavailable',
  };
  return {
    status: err.status,
    title: titles[err.status] ?? 'Something went wrong',
    message: err.message,
    fields: (body.fields as { path: string; message: string }[] | undefined) ?? [],
    action: (body.suggested_action as string | undefined) ?? null,
    code: err.code ?? (body.reason as string | undefined) ?? null,
    body,
  };
}

export function pageFor(deps: Deps, ctx: Context, session: ConsoleSession, form: URLSearchParams): ConsolePage {
  return {
    deps,
    ctx,
    session,
    form,
    async call<T = Record<string, unknown>>(operation: string, call: RestCall = {}): Promise<T> {
      return (await rest<T>(deps, session.auth, ctx, operation, call)).body;
    },
    render(view, data = {}, status = 200) {
      renderView(deps, ctx, view, { ...data, session, csrf: csrfFor(session.csrfSecret) }, status);
    },
  };
}

/** Form values as the REST body wants them: trimmed strings, empty ones left out. */
export function formFields(form: URLSearchParams, names: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = form.get(name);
    if (v !== null && v.trim() !== '') out[name] = v.trim();
  }
  return out;
}

/** A whole number from a form field, or the raw text (so the REST schema names the field when it is not a number). */
export function formNumber(value: string | null): number | string | undefined {
  if (value === null || value.trim() === '') return undefined;
  return /^-?\d+$/.test(value.trim()) ? Number(value.trim()) : value;
}

/** Paths the sign-in may return to: this console's own pages only. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/console(\/[A-Za-z0-9/_\-.?=&%]*)?(#[a-z-]+)?$/.test(next) ? next : '/console';
}
