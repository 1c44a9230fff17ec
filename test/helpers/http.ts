// A small fetch wrapper for tests: JSON or multipart bodies, parsed JSON responses.
export interface HttpResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  key?: string;
  json?: unknown;
  form?: FormData;
  headers?: Record<string, string>;
  raw?: string | Buffer;
}

export async function http<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<HttpResponse<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | FormData | Buffer | undefined;
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.form) {
    body = opts.form;
  } else if (opts.raw !== undefined) {
    body = opts.raw;
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body: body as never });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** Binds http() to one base URL. */
export function client(baseUrl: string) {
  return <T = any>(method: string, path: string, opts: RequestOptions = {}) => http<T>(baseUrl, method, path, opts);
}

/** The sorted `fields[].path` of a 400 validation body. */
export function fieldPaths(body: { fields?: Array<{ path: string }> }): string[] {
  return (body.fields ?? []).map((f) => f.path).sort();
}
