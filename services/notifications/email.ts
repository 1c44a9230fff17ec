// Building and sending one email: the words (domain/notifications/kinds.ts) laid out by
// the Eta templates beside this file, as a plain-text part and an HTML part (inline
// styles, no remote images, no tracking pixels or rewritten links), with List-Unsubscribe
// and List-Unsubscribe-Post (RFC 8058) for notification kinds, sent over SMTP_URL with
// nodemailer. The Message-ID is the notification's own, so a resend is the same message.
import path from 'node:path';
import { Eta } from 'eta';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../../config';
import {
  describeDigest,
  describeNotice,
  EmailKind,
  isNotificationKind,
  KIND_LABELS,
  NoticePayload,
  NoticeText,
} from '../../domain/notifications/kinds';
import { emailLinkKey, signLink } from '../../domain/notifications/links';

const VIEWS = path.join(__dirname, 'emails');
const html = new Eta({ views: VIEWS, cache: true, autoEscape: true });
// The text part keeps its line breaks: only control tags written `-%>` drop the one after them.
const text = new Eta({ views: VIEWS, cache: true, autoEscape: false, autoTrim: false });

export interface OutgoingEmail {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

/** What one notification row says: a single notice, or a digest of `items` (of `total`). */
export type EmailContent =
  { kind: EmailKind; payload: NoticePayload } | { kind: EmailKind; digest: { items: NoticePayload[]; total: number } };

/** The signed unsubscribe URL of a recipient and kind (GET: a confirm page; POST: unsubscribe). */
export function unsubscribeUrl(config: Config, recipientId: string, kind: string): string {
  const token = signLink(emailLinkKey(config.appEncryptionKey), 'unsubscribe', [recipientId, kind]);
  return `${config.siteUrl}/email/unsubscribe?token=${token}`;
}

/**
 * The one-time links of account emails, signed when the email is built (the row stores
 * only the link's id, so no usable token sits in the database).
 */
function withLinkPath(config: Config, kind: EmailKind, payload: NoticePayload): NoticePayload {
  const key = () => emailLinkKey(config.appEncryptionKey);
  if (kind === 'verify_email')
    return {
      ...payload,
      path: `/account/verify-email?token=${signLink(key(), 'verify_email', [String(payload.link_id)])}`,
    };
  if (kind === 'confirm_recipient')
    return {
      ...payload,
      path: `/email/confirm?token=${signLink(key(), 'confirm_recipient', [String(payload.link_id)])}`,
    };
  return payload;
}

const absolute = (config: Config, t: NoticeText): NoticeText =>
  t.action && t.action.path.startsWith('/')
    ? { ...t, action: { ...t.action, path: `${config.siteUrl}${t.action.path}` } }
    : t;

export function buildEmail(
  config: Config,
  to: { email: string; recipientId: string; ownerName: string | null },
  content: EmailContent,
): OutgoingEmail {
  const notification = isNotificationKind(content.kind);
  const unsubscribe = notification ? unsubscribeUrl(config, to.recipientId, content.kind) : null;
  let subject: string;
  let view: { headline: string; single: NoticeText | null; entries: NoticeText[]; more: number };
  if ('digest' in content && isNotificationKind(content.kind)) {
    const d = describeDigest(content.kind, content.digest.items, content.digest.total);
    subject = d.subject;
    view = { headline: d.headline, single: null, entries: d.entries.map((e) => absolute(config, e)), more: d.more };
  } else {
    const payload = withLinkPath(config, content.kind, 'payload' in content ? content.payload : {});
    const t = absolute(config, describeNotice(content.kind, payload));
    subject = t.subject;
    view = { headline: t.headline, single: t, entries: [], more: 0 };
  }
  const data = {
    ...view,
    subject,
    siteUrl: config.siteUrl,
    preferencesUrl: `${config.siteUrl}/console/notifications`,
    unsubscribe,
    kindLabel: notification ? KIND_LABELS[content.kind as keyof typeof KIND_LABELS] : null,
    to: to.email,
  };
  const headers: Record<string, string> = {
    'Auto-Submitted': 'auto-generated',
    'X-Auto-Response-Suppress': 'All',
  };
  if (unsubscribe) {
    headers['List-Unsubscribe'] = `<${unsubscribe}>`;
    headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
  }
  return {
    to: to.email,
    subject,
    text: text.render('notification-text', data),
    html: html.render('notification-html', data),
    headers,
  };
}

// ---------------------------------------------------------------------------------------
// SMTP

/** The relay answered for good (5xx): sending the same message again cannot succeed. */
export class PermanentSmtpFailure extends Error {
  override name = 'PermanentSmtpFailure';
}

const transports = new Map<string, Transporter>();
export const SMTP_TIMEOUTS_MS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

function transport(config: Config): Transporter {
  let t = transports.get(config.notifications.smtpUrl);
  if (!t) {
    // Timeouts go in the URL (nodemailer reads options from its query), so an attempt at a
    // relay that does not answer ends and is retried soon. A value already in SMTP_URL wins.
    const url = new URL(config.notifications.smtpUrl);
    for (const [name, ms] of Object.entries(SMTP_TIMEOUTS_MS))
      if (!url.searchParams.has(name)) url.searchParams.set(name, String(ms));
    t = nodemailer.createTransport(url.toString());
    transports.set(config.notifications.smtpUrl, t);
  }
  return t;
}

/** The domain of MAIL_FROM: the right-hand side of every Message-ID. */
export function messageIdDomain(config: Config): string {
  const m = /@([^>\s]+)>?\s*$/.exec(config.notifications.mailFrom);
  return m ? m[1].toLowerCase() : 'localhost';
}

/**
 * Sends one message with the given Message-ID; answers the relay's reply. A 5xx reply
 * throws PermanentSmtpFailure; anything else that fails (connection refused, timeout,
 * 4xx) throws as it is, to be tried again.
 */
export async function sendEmail(config: Config, email: OutgoingEmail, messageId: string): Promise<string> {
  try {
    const info = await transport(config).sendMail({
      from: config.notifications.mailFrom,
      to: email.to,
      subject: email.subject,
      text: email.text,
      html: email.html,
      messageId,
      headers: email.headers,
    });
    return String(info.response ?? '').slice(0, 500);
  } catch (err) {
    const code = (err as { responseCode?: number }).responseCode;
    if (typeof code === 'number' && code >= 500 && code < 600) {
      throw new PermanentSmtpFailure(`${code}: ${(err as Error).message}`.slice(0, 500));
    }
    throw err;
  }
}
