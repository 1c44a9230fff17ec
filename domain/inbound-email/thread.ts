// Postal thread matching. The strongest signal comes first: an email whose In-Reply-To or
// References header names the Message-ID of mail already in a thread joins that thread
// (score 1), whatever its subject or sender. Otherwise the keys decide: who sent a letter
// (normalised organisation or person name, else an email address), what it is about
// (subject without Re:/Fwd: and generic scanner subjects), and which account or
// reference numbers it carries. An item joins the member's thread that shares the
// strongest key; otherwise it opens a new thread.
//
// Scores: named by a reply header 1; shared reference number 0.95; same sender and same
// subject 0.9; same sender 0.75; same subject 0.6. The best thread at or above
// MATCH_THRESHOLD wins (latest activity breaks ties).

export const MATCH_THRESHOLD = 0.6;

export interface ThreadKeys {
  senderKeys: string[];
  subjectKeys: string[];
  referenceKeys: string[];
}

export interface ThreadCandidate extends ThreadKeys {
  id: string;
  lastEventAt: Date;
}

export interface ThreadMatch {
  id: string;
  score: number;
  reasons: Array<'message_reference' | 'reference_number' | 'sender' | 'subject'>;
}

/** The Message-IDs in a header value, each as `<id>`: "<a@x> <b@y>" -> ["<a@x>", "<b@y>"]; a bare id is bracketed. */
export function messageIds(value: string | null | undefined): string[] {
  const text = (value ?? '').trim();
  if (!text) return [];
  const bracketed = [...text.matchAll(/<([^<>\s]+)>/g)].map((m) => `<${m[1]}>`);
  if (bracketed.length) return bracketed;
  return text
    .split(/[\s,]+/)
    .filter((t) => /^[^\s@]+@[^\s@]+$/.test(t))
    .map((t) => `<${t}>`);
}

/**
 * The messages a reply names, strongest first: its In-Reply-To (the parent), then its
 * References from the newest (last) to the oldest (the thread's root). Without duplicates.
 */
export function replyReferences(headers: {
  in_reply_to?: string | null;
  references?: string[] | string | null;
}): string[] {
  const refs = Array.isArray(headers.references)
    ? headers.references.flatMap(messageIds)
    : messageIds(headers.references);
  return [...new Set([...messageIds(headers.in_reply_to), ...refs.reverse()])];
}

export interface ThreadedMessage {
  messageId: string;
  threadId: string;
}

/** The thread of the first referenced message (in `replyReferences` order) that is already in a thread. */
export function threadByReplyHeaders(references: string[], known: ThreadedMessage[]): ThreadMatch | null {
  for (const ref of references) {
    const hit = known.find((k) => k.messageId === ref);
    if (hit) return { id: hit.threadId, score: 1, reasons: ['message_reference'] };
  }
  return null;
}

const ORG_SUFFIXES = new Set([
  'inc',
  'llc',
  'llp',
  'ltd',
  'co',
  'corp',
  'corporation',
  'company',
  'the',
  'pc',
  'pllc',
  'na',
]);

/** "The Springfield Power & Light Co., Inc." -> "springfield power and light". */
export function normaliseName(name: string): string {
  return name
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[^a-z0-9 ]+/g, ' ')
    .split(/\s+/)
    .filter((w) => w && !ORG_SUFFIXES.has(w))
    .join(' ');
}

export function senderKey(input: {
  documentSenderName?: string | null;
  forwardedFromAddress?: string | null;
  fromAddress?: string | null;
  hasAttachments: boolean;
}): string | null {
  const name = input.documentSenderName ? normaliseName(input.documentSenderName) : '';
  if (name.length >= 3) return `name:${name}`;
  if (input.forwardedFromAddress) return `email:${input.forwardedFromAddress.toLowerCase()}`;
  // A scan emailed by the member names the member, not the letter's sender: only
  // attachment-less mail is keyed by its From address.
  if (!input.hasAttachments && input.fromAddress) return `email:${input.fromAddress.toLowerCase()}`;
  return null;
}

const GENERIC_SUBJECTS =
  /^(scan(ned)?( document| doc| file| image)?|document|doc|photo|image|img|attachment|attachments|file|files|fax|mail|letter|new document|no subject|untitled|(img|dsc|scan|pxl|photo)[ _-]?\d*)$/;

/** The subject without reply/forward prefixes, lower-cased; null when it says nothing specific. */
export function subjectKey(subject: string | null | undefined): string | null {
  let s = (subject ?? '').trim().toLowerCase();
  for (;;) {
    const next = s.replace(/^\s*(re|fwd?|aw|wg|tr|sv|vs)\s*(\[\d+\])?\s*:\s*/i, '').replace(/^\[[^\]]*\]\s*/, '');
    if (next === s) break;
    s = next;
  }
  s = s
    .replace(/[^a-z0-9 ]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (s.length < 4 || GENERIC_SUBJECTS.test(s)) return null;
  return s;
}

/** Reference numbers compared without spaces, dashes or case. */
export function referenceKey(value: string): string | null {
  const k = value.toUpperCase().replace(/[^A-Z0-9]/g, '');
  return k.length >= 4 && /\d/.test(k) ? k : null;
}

export function scoreThread(item: ThreadKeys, thread: ThreadKeys): Omit<ThreadMatch, 'id'> {
  const shares = (a: string[], b: string[]) => a.some((x) => b.includes(x));
  const reasons: ThreadMatch['reasons'] = [];
  if (shares(item.referenceKeys, thread.referenceKeys)) reasons.push('reference_number');
  if (shares(item.senderKeys, thread.senderKeys)) reasons.push('sender');
  if (shares(item.subjectKeys, thread.subjectKeys)) reasons.push('subject');
  let score = 0;
  if (reasons.includes('reference_number')) score = 0.95;
  else if (reasons.includes('sender') && reasons.includes('subject')) score = 0.9;
  else if (reasons.includes('sender')) score = 0.75;
  else if (reasons.includes('subject')) score = 0.6;
  return { score, reasons };
}

export function pickThread(item: ThreadKeys, candidates: ThreadCandidate[]): ThreadMatch | null {
  let best: (ThreadMatch & { at: number }) | null = null;
  for (const c of candidates) {
    const { score, reasons } = scoreThread(item, c);
    if (score < MATCH_THRESHOLD) continue;
    const at = c.lastEventAt.getTime();
    if (!best || score > best.score || (score === best.score && at > best.at)) best = { id: c.id, score, reasons, at };
  }
  return best ? { id: best.id, score: best.score, reasons: best.reasons } : null;
}
