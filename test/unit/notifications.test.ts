// The pure rules of owner notifications: which business events become which kind (live
// only), the low-balance crossing, the words of every kind and of a digest, the signed
// email links, and the email settings' guards (production needs its own relay and sender).
import { DEV_MAIL_FROM, DEV_SMTP_URL, loadConfig } from '../../config';
import {
  ACCOUNT_EMAIL_KINDS,
  creditsRefusedEventKey,
  crossedBelow,
  describeDigest,
  describeNotice,
  NOTIFICATION_KINDS,
  noticeForEvent,
  PublishedEventFacts,
} from '../../domain/notifications/kinds';
import { emailLinkKey, readLink, signLink } from '../../domain/notifications/links';
import { LOCAL_DEV_ENCRYPTION_KEY } from '../../config';

const mailEvent = (eventType: string, extra: Record<string, unknown> = {}, testMode = false): PublishedEventFacts => ({
  eventKey: `mail:m1:${eventType}`,
  memberId: 'member-1',
  eventType,
  testMode,
  objectType: 'outbound_mail',
  objectId: 'm1',
  payload: {
    recipient_name: 'Jane Doe',
    recipient_city: 'Austin',
    recipient_state: 'TX',
    recipient_zip: '78701',
    cost_cents: 215,
    mail_class: 'first_class',
    ...extra,
  },
});

describe('events owners are told of', () => {
  it('turns a live approval wait, failure and carrier failure into notices, keyed by the event', () => {
    expect(noticeForEvent(mailEvent('mail.pending_approval'), 'Billing bot')).toEqual({
      memberId: 'member-1',
      eventKey: 'mail:m1:mail.pending_approval',
      kind: 'approval_needed',
      payload: {
        mail_id: 'm1',
        recipient: 'Jane Doe, Austin, TX 78701',
        cost_cents: 215,
        mail_class: 'first_class',
        agent_name: 'Billing bot',
      },
    });
    expect(noticeForEvent(mailEvent('mail.failed', { error_message: 'Paper jam' }), null)).toMatchObject({
      kind: 'piece_failed',
      payload: { object: 'mail', reason: 'Paper jam', carrier_delivery_failed: false },
    });
    expect(noticeForEvent(mailEvent('mail.failed', { carrier_delivery_failed: true }), null)).toMatchObject({
      kind: 'piece_failed',
      payload: { carrier_delivery_failed: true },
    });
  });

  it('leaves the sandbox and the events nobody waits on alone', () => {
    expect(noticeForEvent(mailEvent('mail.pending_approval', {}, true), null)).toBeNull();
    for (const t of [
      'mail.submitted',
      'mail.ready',
      'mail.mailed',
      'mail.delivered',
      'mail.cancelled',
      'batch.completed',
    ])
      expect(noticeForEvent(mailEvent(t), null)).toBeNull();
  });

  it('tells of a batch with failed pieces once, with its counts, and of a physical item arriving', () => {
    const batch = (eventType: string, failed: number): PublishedEventFacts => ({
      eventKey: `batch:b1:${eventType}`,
      memberId: 'member-1',
      eventType,
      testMode: false,
      objectType: 'batch',
      objectId: 'b1',
      payload: {
        job_name: 'Spring',
        pieces_failed: failed,
        pieces_mailed: 500 - failed,
        total_pieces: 500,
        status: 'x',
      },
    });
    expect(noticeForEvent(batch('batch.failed', 500), null)).toMatchObject({
      kind: 'piece_failed',
      payload: { object: 'batch', pieces_failed: 500, total_pieces: 500 },
    });
    expect(noticeForEvent(batch('batch.partially_completed', 3), null)?.kind).toBe('piece_failed');
    expect(noticeForEvent(batch('batch.partially_completed', 0), null)).toBeNull();
    const received = { ...batch('inbound.received', 0), objectType: 'inbound_item', objectId: 'i1' };
    expect(noticeForEvent(received, 'Mailroom')).toMatchObject({ kind: 'mail_arrived', payload: { item_id: 'i1' } });
    // Forwarded email is not mail at the mailbox.
    expect(noticeForEvent({ ...received, objectType: 'inbound_mail_item' }, null)).toBeNull();
  });

  it('crosses the low-balance threshold only going down through it', () => {
    expect(crossedBelow(1000, 999, 1000)).toBe(true);
    expect(crossedBelow(1500, 200, 1000)).toBe(true);
    expect(crossedBelow(999, 500, 1000)).toBe(false); // already below
    expect(crossedBelow(2000, 1000, 1000)).toBe(false); // not below
    expect(crossedBelow(100, 0, 0)).toBe(false); // 0 switches it off
  });

  it('keys refusals for credits by member and clock hour', () => {
    expect(creditsRefusedEventKey('m', new Date('2026-03-04T05:59:59Z'))).toBe('credits-refused:m:2026-03-04T05');
    expect(creditsRefusedEventKey('m', new Date('2026-03-04T06:00:00Z'))).toBe('credits-refused:m:2026-03-04T06');
  });
});

describe('the words', () => {
  it('gives every kind a subject, a headline and a console link', () => {
    for (const kind of [...NOTIFICATION_KINDS, ...ACCOUNT_EMAIL_KINDS]) {
      const t = describeNotice(kind, { mail_id: 'm1', batch_id: 'b1', endpoint_id: 'e1', item_id: 'i1', path: '/x' });
      expect(t.subject.length).toBeGreaterThan(5);
      expect(t.headline.length).toBeGreaterThan(5);
      expect(t.action?.path).toMatch(/^\//);
      expect(t.subject).not.toMatch(/undefined|null|NaN/);
    }
    expect(describeNotice('approval_needed', { mail_id: 'm1', recipient: 'Jane', cost_cents: 215 }).action).toEqual({
      label: 'Review and approve',
      path: '/console/mail/m1',
    });
    expect(describeNotice('credits', { movement: 'dispute_opened', amount_cents: 2500 }).subject).toBe(
      'Payment disputed: $25.00',
    );
  });

  it('lists a digest and counts what it leaves out', () => {
    const d = describeDigest(
      'approval_needed',
      [
        { mail_id: 'a', recipient: 'A' },
        { mail_id: 'b', recipient: 'B' },
      ],
      60,
    );
    expect(d.subject).toBe('Digest: A letter waits for your approval (60)');
    expect(d.entries.map((e) => e.action?.path)).toEqual(['/console/mail/a', '/console/mail/b']);
    expect(d.more).toBe(58);
  });
});

describe('signed email links', () => {
  const key = emailLinkKey(LOCAL_DEV_ENCRYPTION_KEY);
  const recipient = '42e2fef9-ab7f-43cc-ae6b-510a32a8f959';

  it('reads back what it signed, for its purpose only', () => {
    const token = signLink(key, 'unsubscribe', [recipient, 'approval_needed']);
    expect(readLink(key, 'unsubscribe', token, 2)).toEqual([recipient, 'approval_needed']);
    expect(readLink(key, 'confirm_recipient', token, 2)).toBeNull();
    expect(readLink(key, 'unsubscribe', token, 1)).toBeNull();
  });

  it('refuses another kind, another key, a changed signature and garbage', () => {
    const token = signLink(key, 'unsubscribe', [recipient, 'approval_needed']);
    const [, , sig] = token.split('.');
    expect(readLink(key, 'unsubscribe', `${recipient}.low_balance.${sig}`, 2)).toBeNull();
    expect(readLink(emailLinkKey(Buffer.alloc(32, 9).toString('base64')), 'unsubscribe', token, 2)).toBeNull();
    expect(readLink(key, 'unsubscribe', `${token.slice(0, -2)}AA`, 2)).toBeNull();
    for (const bad of [undefined, '', 'a.b', 'x'.repeat(500), `${recipient}.approval needed.${sig}`, 42])
      expect(readLink(key, 'unsubscribe', bad, 2)).toBeNull();
    expect(() => signLink(key, 'unsubscribe', ['has.dot'])).toThrow();
  });
});

describe('email settings', () => {
  const production = {
    NODE_ENV: 'production',
    APP_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    STRIPE_SECRET_KEY: 'sk_live_TestOnlyNotARealKey',
    STRIPE_WEBHOOK_SECRET: 'whsec_TestOnlyNotARealSecret',
  };

  it('outside production: Mailpit and a local sender, an hour-long digest window', () => {
    expect(loadConfig({}).notifications).toEqual({
      smtpUrl: DEV_SMTP_URL,
      mailFrom: DEV_MAIL_FROM,
      digestWindowSeconds: 3600,
      approvalExpiryNoticeSeconds: 172800,
      reconcileEverySeconds: 60,
      emailLinkHours: 48,
    });
  });

  it('production refuses to start without its own relay and sender', () => {
    expect(() => loadConfig(production)).toThrow(/SMTP_URL/);
    expect(() => loadConfig({ ...production, SMTP_URL: 'smtps://u:p@relay.example.com:465' })).toThrow(/MAIL_FROM/);
    const ok = loadConfig({
      ...production,
      SMTP_URL: 'smtps://u:p@relay.example.com:465',
      MAIL_FROM: 'Postal Mail <notifications@example.com>',
    });
    expect(ok.notifications).toMatchObject({ smtpUrl: 'smtps://u:p@relay.example.com:465' });
  });

  it('refuses a relay that is not SMTP and a sender that is not an address', () => {
    expect(() => loadConfig({ SMTP_URL: 'http://relay.example.com' })).toThrow(/SMTP_URL must be/);
    expect(() => loadConfig({ SMTP_URL: 'not a url' })).toThrow(/SMTP_URL must be/);
    expect(() => loadConfig({ MAIL_FROM: 'Postal Mail' })).toThrow(/MAIL_FROM must be/);
    expect(() => loadConfig({ NOTIFICATION_DIGEST_WINDOW_SECONDS: '0' })).toThrow(/NOTIFICATION_DIGEST_WINDOW_SECONDS/);
  });
});
