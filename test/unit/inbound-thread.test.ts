import {
  messageIds,
  normaliseName,
  pickThread,
  referenceKey,
  replyReferences,
  senderKey,
  subjectKey,
  threadByReplyHeaders,
} from '../../domain/inbound-email/thread';

describe('postal thread keys', () => {
  it('normalises organisation names', () => {
    expect(normaliseName('The Springfield Power & Light Co., Inc.')).toBe('springfield power and light');
  });

  it('keys the sender by the document sender, then a forwarded From, then the From of attachment-less mail', () => {
    expect(
      senderKey({
        documentSenderName: 'Springfield Power & Light',
        fromAddress: 'me@example.test',
        hasAttachments: true,
      }),
    ).toBe('name:springfield power and light');
    expect(
      senderKey({ forwardedFromAddress: 'Billing@Acme.test', fromAddress: 'me@example.test', hasAttachments: false }),
    ).toBe('email:billing@acme.test');
    expect(senderKey({ fromAddress: 'Grandma@example.test', hasAttachments: false })).toBe(
      'email:grandma@example.test',
    );
    expect(senderKey({ fromAddress: 'scanner@example.test', hasAttachments: true })).toBeNull();
  });

  it('strips reply and forward prefixes and ignores generic scanner subjects', () => {
    expect(subjectKey('Re: Fwd: FW: Your lease renewal!')).toBe('your lease renewal');
    expect(subjectKey('[Scan] Scanned Document')).toBeNull();
    expect(subjectKey('IMG_2041')).toBeNull();
    expect(subjectKey('')).toBeNull();
  });

  it('compares reference numbers without punctuation', () => {
    expect(referenceKey('4410-2231-07')).toBe('4410223107');
    expect(referenceKey('AB-1')).toBeNull();
  });

  it('picks the strongest matching thread and the latest on ties', () => {
    const item = { senderKeys: ['name:acme'], subjectKeys: ['rent'], referenceKeys: ['12345'] };
    const old = new Date('2025-01-01');
    const recent = new Date('2025-02-01');
    const candidates = [
      { id: 'subject-only', senderKeys: [], subjectKeys: ['rent'], referenceKeys: [], lastEventAt: recent },
      { id: 'sender-old', senderKeys: ['name:acme'], subjectKeys: [], referenceKeys: [], lastEventAt: old },
      { id: 'sender-new', senderKeys: ['name:acme'], subjectKeys: [], referenceKeys: [], lastEventAt: recent },
    ];
    expect(pickThread(item, candidates)).toEqual({ id: 'sender-new', score: 0.75, reasons: ['sender'] });
    const withRef = [
      ...candidates,
      { id: 'ref', senderKeys: [], subjectKeys: [], referenceKeys: ['12345'], lastEventAt: old },
    ];
    expect(pickThread(item, withRef)?.id).toBe('ref');
    expect(pickThread({ senderKeys: ['name:other'], subjectKeys: [], referenceKeys: [] }, candidates)).toBeNull();
  });

  it('reads Message-IDs from reply headers, parent first, then References newest to oldest', () => {
    expect(messageIds(' <a@x.test>  <b@y.test>')).toEqual(['<a@x.test>', '<b@y.test>']);
    expect(messageIds('bare@x.test')).toEqual(['<bare@x.test>']);
    expect(messageIds('')).toEqual([]);
    expect(replyReferences({ in_reply_to: '<p@x>', references: ['<root@x>', '<mid@x>', '<p@x>'] })).toEqual([
      '<p@x>',
      '<mid@x>',
      '<root@x>',
    ]);
    expect(replyReferences({ references: '<root@x> <mid@x>' })).toEqual(['<mid@x>', '<root@x>']);
    expect(replyReferences({})).toEqual([]);
  });

  it('joins the thread of the closest referenced message that is already threaded', () => {
    const known = [
      { messageId: '<root@x>', threadId: 't-root' },
      { messageId: '<mid@x>', threadId: 't-mid' },
    ];
    expect(threadByReplyHeaders(['<p@x>', '<mid@x>', '<root@x>'], known)).toEqual({
      id: 't-mid',
      score: 1,
      reasons: ['message_reference'],
    });
    expect(threadByReplyHeaders(['<unknown@x>'], known)).toBeNull();
  });
});
