// OAuth helpers for tests: a loopback callback server that catches the authorization
// response, PKCE pairs, registration, a console session for the consent page (its cookie
// and CSRF token, as the sign-in would set them), and the consent form posted without a
// browser. Browser-driven consent lives in the e2e test.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Deps } from '../../services/shared/deps';
import { csrfToken, findConsoleSession, signInWithMemberKey } from '../../services/accounts/console-sessions';

export interface CallbackServer {
  url: string;
  /** The query of each request it received, in order. */
  hits: URLSearchParams[];
  next(): Promise<URLSearchParams>;
  close(): Promise<void>;
}

export async function callbackServer(path = '/callback'): Promise<CallbackServer> {
  const hits: URLSearchParams[] = [];
  const waiting: Array<(q: URLSearchParams) => void> = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    hits.push(url.searchParams);
    waiting.shift()?.(url.searchParams);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>Connected</title><p>You can close this window.</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    hits,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function register(siteUrl: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(`${siteUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

export async function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
    redirect: 'manual',
  });
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* HTML */
  }
  return { status: res.status, body, headers: res.headers };
}

/** A console session of the member's live key: the cookie header and a valid CSRF token for its forms. */
export async function consoleSession(deps: Deps, memberKey: string): Promise<{ cookie: string; csrf: string }> {
  const { token } = await signInWithMemberKey(deps, memberKey);
  const session = await findConsoleSession(deps, token);
  return { cookie: `pm_console=${token}`, csrf: csrfToken(session!.csrfSecret) };
}

export interface AuthorizationInput {
  client_id: string;
  redirect_uri: string;
  resource: string;
  code_challenge?: string;
  code_challenge_method?: string;
  scope?: string;
  state?: string;
  response_type?: string;
}

export function authorizationParams(input: AuthorizationInput): Record<string, string> {
  const out: Record<string, string> = { response_type: 'code', code_challenge_method: 'S256', state: 'st-1' };
  for (const [k, v] of Object.entries(input)) if (v !== undefined) out[k] = v;
  return out;
}

export async function getAuthorize(siteUrl: string, params: Record<string, string>, cookie?: string) {
  const res = await fetch(`${siteUrl}/console/oauth/authorize?${new URLSearchParams(params)}`, {
    redirect: 'manual',
    headers: cookie ? { cookie } : {},
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** Posts the consent form; answers the redirect's query (code or error) and the response. */
export async function consent(
  siteUrl: string,
  session: { cookie: string; csrf: string },
  params: Record<string, string>,
  choice: Record<string, string | string[]> = {},
) {
  const form = new URLSearchParams({ ...params, _csrf: session.csrf, decision: 'approve', environment: 'test' });
  for (const [k, v] of Object.entries(choice)) {
    form.delete(k);
    for (const value of Array.isArray(v) ? v : [v]) form.append(k, value);
  }
  const res = await fetch(`${siteUrl}/console/oauth/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: session.cookie },
    body: form.toString(),
    redirect: 'manual',
  });
  const location = res.headers.get('location');
  return {
    status: res.status,
    location,
    query: location ? new URL(location).searchParams : new URLSearchParams(),
    text: await res.text(),
  };
}
