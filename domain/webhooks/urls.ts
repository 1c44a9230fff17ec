// Where the worker may send webhooks (server-side request forgery rules). Custom
// endpoints need public HTTPS on port 443; legacy agent webhooks need public HTTPS on any
// port. Both refuse private, loopback, link-local, metadata and other non-public
// addresses, at configuration time (here, for literal addresses and reserved names) and
// again at delivery time for every address a host name resolves to. With
// WEBHOOKS_ALLOW_INSECURE_LOCAL=true (tests, local receivers) URLs that name this
// machine's loopback (localhost, 127.0.0.0/8, ::1) may also use http and any port;
// every other URL keeps every rule. Pure: no I/O (DNS resolution happens in
// services/webhooks/http.ts).

export type WebhookUrlKind = 'endpoint' | 'agent_webhook';

export const MAX_URL_LENGTH = 2048;

const RESERVED_NAMES = [
  /^localhost$/,
  /\.localhost$/,
  /\.local$/,
  /\.internal$/,
  /\.home\.arpa$/,
  /^metadata$/,
  /\.arpa$/,
];

export function webhookUrlProblem(raw: string, kind: WebhookUrlKind, allowInsecureLocal: boolean): string | null {
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not contain credentials';
  const host = url.hostname.toLowerCase();
  const literal = host.startsWith('[') ? host.slice(1, -1) : host;
  if (allowInsecureLocal && isLoopbackHost(literal)) {
    return url.protocol === 'https:' || url.protocol === 'http:' ? null : 'must use http or https';
  }
  if (url.protocol !== 'https:') return 'must use https';
  // WHATWG URL drops the default port, so '' means 443.
  if (kind === 'endpoint' && url.port !== '') return 'must use port 443';
  const bytes = parseIp(literal);
  if (bytes)
    return isPublicAddress(literal) ? null : 'must not point at a private, loopback, link-local or metadata address';
  if (!host.includes('.') || RESERVED_NAMES.some((r) => r.test(host.replace(/\.$/, ''))))
    return 'must be a public host name';
  return null;
}

/** `localhost` or a loopback address literal (brackets already removed from IPv6). */
export function isLoopbackHost(host: string): boolean {
  return host.replace(/\.$/, '') === 'localhost' || isLoopbackAddress(host);
}

/** 127.0.0.0/8, ::1, and 127.0.0.0/8 written as an IPv4-mapped IPv6 address. */
export function isLoopbackAddress(ip: string): boolean {
  const b = parseIp(ip);
  if (!b) return false;
  if (b.length === 4) return b[0] === 127;
  const zeroPrefix = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeroPrefix(15) && b[15] === 1) return true;
  return zeroPrefix(10) && b[10] === 0xff && b[11] === 0xff && b[12] === 127;
}

/** 4 or 16 bytes, or null when `text` is not an IP address literal. */
export function parseIp(text: string): number[] | null {
  return parseIpv4(text) ?? parseIpv6(text);
}

function parseIpv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : null;
}

function parseIpv6(text: string): number[] | null {
  if (!text.includes(':') || text.includes('%')) return null;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    const v4 = parseIpv4(last);
    if (!v4) return null;
    text = `${text.slice(0, lastColon + 1)}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string) => (s === '' ? [] : s.split(':'));
  const left = groups(halves[0]);
  const right = halves.length === 2 ? groups(halves[1]) : [];
  const missing = 8 - left.length - right.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...right];
  const out: number[] = [];
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return null;
    const v = parseInt(g, 16);
    out.push(v >> 8, v & 0xff);
  }
  return out;
}

function inV4(b: number[], net: [number, number, number, number], prefix: number): boolean {
  for (let bit = 0; bit < prefix; bit++) {
    const i = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if ((b[i] & mask) !== (net[i] & mask)) return false;
  }
  return true;
}

const BLOCKED_V4: Array<[[number, number, number, number], number]> = [
  [[0, 0, 0, 0], 8], // "this" network
  [[10, 0, 0, 0], 8], // private
  [[100, 64, 0, 0], 10], // carrier-grade NAT
  [[127, 0, 0, 0], 8], // loopback
  [[169, 254, 0, 0], 16], // link-local, cloud metadata 169.254.169.254
  [[172, 16, 0, 0], 12], // private
  [[192, 0, 0, 0], 24], // IETF protocol assignments
  [[192, 0, 2, 0], 24], // documentation
  [[192, 88, 99, 0], 24], // 6to4 relay anycast
  [[192, 168, 0, 0], 16], // private
  [[198, 18, 0, 0], 15], // benchmarking
  [[198, 51, 100, 0], 24], // documentation
  [[203, 0, 113, 0], 24], // documentation
  [[224, 0, 0, 0], 4], // multicast
  [[240, 0, 0, 0], 4], // reserved, broadcast
];

function publicV4(b: number[]): boolean {
  return !BLOCKED_V4.some(([net, prefix]) => inV4(b, net, prefix));
}

/** True only for globally routable unicast addresses. */
export function isPublicAddress(ip: string): boolean {
  const b = parseIp(ip);
  if (!b) return false;
  if (b.length === 4) return publicV4(b);
  const zeroPrefix = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (zeroPrefix(10) && b[10] === 0xff && b[11] === 0xff) return publicV4(b.slice(12)); // ::ffff:a.b.c.d
  if (zeroPrefix(12)) return false; // ::, ::1 and the deprecated IPv4-compatible form
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && b.slice(4, 12).every((x) => x === 0)) {
    return publicV4(b.slice(12)); // NAT64 64:ff9b::/96
  }
  if (b[0] === 0x20 && b[1] === 0x02) return publicV4(b.slice(2, 6)); // 6to4 2002::/16 embeds an IPv4 address
  if ((b[0] & 0xfe) === 0xfc) return false; // unique local fc00::/7 (includes fd00:ec2::254 metadata)
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0x80) return false; // link-local fe80::/10
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0xc0) return false; // site-local fec0::/10
  if (b[0] === 0xff) return false; // multicast
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x0d && b[3] === 0xb8) return false; // documentation 2001:db8::/32
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0x00 && b[3] === 0x00) return false; // Teredo 2001::/32
  if (b[0] === 0x01 && b[1] === 0x00 && b.slice(2, 8).every((x) => x === 0)) return false; // discard 100::/64
  return (b[0] & 0xe0) === 0x20; // global unicast 2000::/3
}
