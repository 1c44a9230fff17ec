// Reading what the apps emailed, through Mailpit's HTTP API (MAILPIT_URL, set by the test
// runner): messages to an address (GET /api/v1/search), one message with its text and
// HTML parts (GET /api/v1/message/{ID}) and its headers (GET /api/v1/message/{ID}/headers).

export interface MailSummary {
  ID: string;
  MessageID: string;
  Subject: string;
  To: Array<{ Address: string }>;
  Created: string;
}

export interface MailMessage extends MailSummary {
  Text: string;
  HTML: string;
  ListUnsubscribe: { Header: string; Links: string[]; HeaderPost: string };
}

export function mailpitUrl(): string {
  const url = process.env.MAILPIT_URL;
  if (!url) throw new Error('MAILPIT_URL is not set (the test runner sets it to the stack’s Mailpit)');
  return url.replace(/\/$/, '');
}

async function get<T>(path: string, base = mailpitUrl()): Promise<T> {
  const res = await fetch(`${base}${path}`);
  if (!res.ok) throw new Error(`Mailpit ${path}: ${res.status}`);
  return (await res.json()) as T;
}

/** Every message to `address`, oldest first. */
export async function messagesTo(address: string, base?: string): Promise<MailSummary[]> {
  const query = encodeURIComponent(`to:"${address}"`);
  const found = await get<{ messages: MailSummary[] }>(`/api/v1/search?query=${query}&limit=1000`, base);
  return found.messages
    .filter((m) => m.To.some((t) => t.Address.toLowerCase() === address.toLowerCase()))
    .sort((a, b) => a.Created.localeCompare(b.Created));
}

export async function message(id: string, base?: string): Promise<MailMessage> {
  return get<MailMessage>(`/api/v1/message/${id}`, base);
}

export async function headers(id: string, base?: string): Promise<Record<string, string[]>> {
  return get<Record<string, string[]>>(`/api/v1/message/${id}/headers`, base);
}

/** Waits until `address` has at least `count` messages (or `match` of them); answers them all. */
export async function waitForMail(
  address: string,
  opts: { count?: number; match?: (m: MailSummary) => boolean; timeoutMs?: number; base?: string } = {},
): Promise<MailSummary[]> {
  const count = opts.count ?? 1;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    const all = await messagesTo(address, opts.base);
    const matching = opts.match ? all.filter(opts.match) : all;
    if (matching.length >= count) return matching;
    if (Date.now() > deadline)
      throw new Error(
        `timed out waiting for ${count} email(s) to ${address}; got ${matching.length}: ${all.map((m) => m.Subject).join(' | ')}`,
      );
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** The first absolute link in a text part that starts with `prefix`. */
export function linkIn(text: string, prefix: string): string {
  const found = text.match(/https?:\/\/\S+/g)?.find((u) => u.startsWith(prefix));
  if (!found) throw new Error(`no link starting with ${prefix} in:\n${text}`);
  return found;
}
