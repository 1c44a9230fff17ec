// "Must contain a visible character": text made only of zero-width, format, filler,
// combining or whitespace characters shows nothing, so every non-blank rule (names,
// labels, tags, notes, terms, messages, address lines) refuses it with its field path.
// And text that reads as something else (decision 0110): bidi overrides and isolates,
// every other format character (Cf) but joiners inside a word, control characters, and
// line breaks in single-line fields are refused, by the domain rule and by every schema
// and domain check that uses it (mail, MCP, batch CSV rows, handling and forwarding).
import type { z } from 'zod';
import {
  describeCharacter,
  findHiddenCharacter,
  hasVisibleCharacter,
  hiddenCharacterProblem,
} from '../../domain/workflow-safe/visible-text';
import { parseRecipientsCsv } from '../../domain/batches/recipients-csv';
import { termProblem } from '../../domain/webhooks/rules';
import { checkFacilityDecision, checkForwardAddress, checkProposal } from '../../domain/workflow-safe/handling';
import { AgentCreateRequest, AgentPatchRequest, ProposalRequest } from '../../api/routes/accounts/agents.schemas';
import { MemberKeyRequest } from '../../api/routes/accounts/keys.schemas';
import { SignupRequest } from '../../api/routes/accounts/public.schemas';
import {
  AliasCreateRequest,
  AliasUpdateRequest,
  ThreadUpdateRequest,
} from '../../api/routes/inbound-email/inbound-context.schemas';
import { CreateBatchForm, FailBody } from '../../api/routes/batches/batches.schemas';
import {
  CarrierDeliveryFailedBody,
  FailedBody,
  SubmitMailForm,
  TestMailBody,
} from '../../api/routes/outbound-mail/mail.schemas';
import {
  AcknowledgmentBody,
  ActionPatchRequest,
  ForwardRequest,
  IdentifyBody,
  NoteBody,
  ScanRejectBody,
  TagBody,
} from '../../api/routes/physical-inbound/physical-inbound.schemas';
import { EndpointCreateRequest, EndpointPatchRequest, RuleRequest } from '../../api/routes/webhooks/webhooks.schemas';
import { SupportMessageBody } from '../../api/routes/support/support';
import { FacilityMessageBody } from '../../api/routes/support/facility-messages';
import { AgentAuthRequest } from '../../api/discovery/surfaces';
import { registeredTools } from '../../api/mcp/tools';
import { ClientMetadata } from '../../domain/accounts/oauth-metadata';

/** Each shows nothing. */
const INVISIBLE = [
  '\u200B', // zero-width space
  '\uFEFF\u200B', // byte-order mark + zero-width space
  ' \u2060\t', // word joiner between whitespace
  '\u200C\u200D', // zero-width non-joiner and joiner
  '\u0301\u0308', // combining marks without a base
  '\u3164', // Hangul filler
  '\u2800', // blank Braille pattern
  '\u00AD', // soft hyphen
  '\u202E', // right-to-left override
  '\uFE0F', // variation selector
];

describe('hasVisibleCharacter', () => {
  it.each(INVISIBLE)('%j shows nothing', (text) => {
    expect(hasVisibleCharacter(text)).toBe(false);
  });

  it.each(['a', ' a ', '\u200Ba', 'é', 'e\u0301', '中文', '🙂', '0', '.', '\u00A0x'])('%j shows something', (text) => {
    expect(hasVisibleCharacter(text)).toBe(true);
  });

  it('the empty string shows nothing', () => {
    expect(hasVisibleCharacter('')).toBe(false);
  });
});

const sendTool = registeredTools.find((t) => t.name === 'send_outbound_mail')!;

/** [schema, a body, the dot-path of the text field]. Other fields may be invalid: only this path is judged. */
const TEXT_FIELDS: Array<[string, z.ZodType, Record<string, unknown>, string]> = [
  ['agent name', AgentCreateRequest, {}, 'name'],
  ['agent name (patch)', AgentPatchRequest, {}, 'name'],
  ['instructions proposal', ProposalRequest, {}, 'suggested_content'],
  ['member key name', MemberKeyRequest, {}, 'name'],
  ['signup full_name', SignupRequest, {}, 'full_name'],
  ['alias label', AliasCreateRequest, {}, 'label'],
  ['alias provider', AliasUpdateRequest, {}, 'provider'],
  ['thread title', ThreadUpdateRequest, {}, 'title'],
  ['batch job_name', CreateBatchForm, {}, 'job_name'],
  ['batch failure', FailBody, {}, 'error_message'],
  ['mail recipient_name', SubmitMailForm, {}, 'recipient_name'],
  ['mail recipient_line1', SubmitMailForm, {}, 'recipient_line1'],
  ['mail recipient_city', SubmitMailForm, {}, 'recipient_city'],
  ['mail agent_notes', SubmitMailForm, {}, 'agent_notes'],
  ['test mail return_name', TestMailBody, {}, 'return_name'],
  ['mail failure', FailedBody, {}, 'message'],
  ['carrier delivery failure', CarrierDeliveryFailedBody, {}, 'message'],
  ['clarification answer', ActionPatchRequest, {}, 'respond_to_clarification'],
  ['forward to_name', ForwardRequest, {}, 'to_name'],
  ['package tag', TagBody, {}, 'tag'],
  ['package label', TagBody, {}, 'label'],
  ['package note', NoteBody, {}, 'note'],
  ['acknowledgment run_id', AcknowledgmentBody, {}, 'run_id'],
  ['label recipient_name', IdentifyBody, {}, 'recipient_name'],
  ['scan rejection', ScanRejectBody, {}, 'reason'],
  ['webhook rule name', RuleRequest, { terms: ['notice'] }, 'name'],
  ['webhook rule term', RuleRequest, { name: 'rule', terms: [] }, 'terms.0'],
  ['webhook rule exclude term', RuleRequest, { name: 'rule', terms: ['notice'], exclude_terms: [] }, 'exclude_terms.0'],
  ['webhook endpoint name', EndpointCreateRequest, {}, 'name'],
  ['support message', SupportMessageBody, {}, 'body'],
  [
    'support attachment filename',
    SupportMessageBody,
    { body: 'hi', attachments: [{ content_type: 'text/plain', content_base64: 'aGk=' }] },
    'attachments.0.filename',
  ],
  ['facility message subject', FacilityMessageBody, { body: 'hi' }, 'subject'],
  ['agent sign-in agent_name', AgentAuthRequest, { email: 'a@example.com' }, 'agent_name'],
  ['MCP document_filename', sendTool.input, {}, 'document_filename'],
];

function setPath(base: Record<string, unknown>, path: string, value: string): Record<string, unknown> {
  const body = structuredClone(base);
  const keys = path.split('.');
  let target: any = body;
  for (const k of keys.slice(0, -1))
    target = target[k] ?? (target[k] = /^\d+$/.test(keys[keys.indexOf(k) + 1]) ? [] : {});
  target[keys[keys.length - 1]] = value;
  return body;
}

const issuesAt = (schema: z.ZodType, body: unknown, path: string) => {
  const r = schema.safeParse(body);
  return r.success ? [] : r.error.issues.filter((i) => i.path.join('.') === path).map((i) => i.message);
};

describe('every non-blank text field refuses invisible text', () => {
  it.each(TEXT_FIELDS)('%s', (_label, schema, base, path) => {
    expect(issuesAt(schema, setPath(base, path, 'Visible text 1'), path)).toEqual([]);
    for (const text of INVISIBLE) {
      expect({ text, issues: issuesAt(schema, setPath(base, path, text), path) }).toEqual({
        text,
        issues: expect.arrayContaining(['must contain a visible character']),
      });
    }
  });

  it('webhook rule terms (the domain rule)', () => {
    for (const text of INVISIBLE) expect(termProblem(text)).toBe('must contain a visible character');
    expect(termProblem('final\u200Bnotice')).toBeNull();
  });

  it('handling destinations, facility decisions and package forwarding addresses', () => {
    const destination = {
      name: 'Ada',
      address_line1: '1 Main St',
      city: 'Austin',
      state: 'TX',
      postal_code: '78701',
      country: 'US',
    };
    for (const text of INVISIBLE) {
      const proposal = checkProposal(
        {
          action_type: 'forward_original',
          mail_class: 'priority',
          destination: { ...destination, city: text },
        } as never,
        { kind: 'letter', status: 'received' },
      );
      expect(proposal).toMatchObject({
        ok: false,
        fields: expect.arrayContaining([{ path: 'destination.city', message: 'must contain a visible character' }]),
      });
      expect(
        checkFacilityDecision({ action_type: 'discard', mail_class: null }, {
          decision: 'reject',
          reason: text,
        } as never),
      ).toContainEqual({ path: 'reason', message: 'a reason is required to reject' });
      expect(
        checkFacilityDecision({ action_type: 'discard', mail_class: null }, {
          decision: 'complete',
          attestation: text,
        } as never),
      ).toContainEqual({ path: 'attestation', message: expect.stringMatching(/attestation/) });
      const forward = checkForwardAddress({
        to_name: text,
        to_line1: '1 Main St',
        to_city: 'Austin',
        to_state: 'TX',
        to_zip: '78701',
      });
      expect(forward).toMatchObject({ ok: false, fields: [{ path: 'to_name' }] });
    }
  });
});

/** Every format character (General_Category Cf) this runtime knows. */
const FORMAT_CHARACTERS = (() => {
  const out: number[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    if (/^\p{Cf}$/u.test(String.fromCodePoint(cp))) out.push(cp);
  }
  return out;
})();

const BIDI = [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];

describe('hiddenCharacterProblem (decision 0110)', () => {
  it('covers the bidi controls, zero-width characters, soft hyphen, BOM and tag characters as format characters', () => {
    for (const cp of [...BIDI, 0x200b, 0x2060, 0x2064, 0xfeff, 0xad, 0x180e, 0xe0001, 0xe0041, 0xe007f])
      expect(FORMAT_CHARACTERS).toContain(cp);
    expect(FORMAT_CHARACTERS.length).toBeGreaterThanOrEqual(160);
  });

  it.each(['single_line', 'multi_line'] as const)('refuses every format character inside %s text', (layout) => {
    for (const cp of FORMAT_CHARACTERS) {
      const text = `Ada ${String.fromCodePoint(cp)}Lovelace`;
      expect({ cp: cp.toString(16), found: findHiddenCharacter(text, layout) }).toEqual({
        cp: cp.toString(16),
        found: { position: 5, codePoint: cp, kind: 'format' },
      });
    }
  });

  it('names the character and where it is', () => {
    expect(hiddenCharacterProblem('1 Main St\u202E7 tinU', 'single_line')).toBe(
      'must not contain invisible formatting characters such as bidi overrides or zero-width characters ' +
        '(U+202E right-to-left override at character 10): they make text read or print as something else',
    );
    expect(hiddenCharacterProblem('Ada\nLovelace', 'single_line')).toBe(
      'must be a single line: line breaks are refused (U+000A line feed at character 4)',
    );
    expect(hiddenCharacterProblem('Ada\tLovelace', 'single_line')).toBe(
      'must not contain control characters (U+0009 tab at character 4)',
    );
    // Positions count characters, not UTF-16 units: the emoji before it is one.
    expect(hiddenCharacterProblem('🙂\u2066x', 'multi_line')).toMatch(/U\+2066 left-to-right isolate at character 2/);
    expect(describeCharacter(0xe0041)).toBe('U+E0041 tag character');
    expect(describeCharacter(0x1b)).toBe('U+001B control character');
    expect(describeCharacter(0x2061)).toBe('U+2061 invisible formatting character');
  });

  it('line breaks and tabs: refused on one line, kept in text of several lines; U+2028/U+2029 and other controls nowhere', () => {
    for (const br of ['\n', '\r', '\r\n', '\t', '\u2028', '\u2029', '\u0085', '\u000b', '\u000c']) {
      expect({ br, problem: hiddenCharacterProblem(`one${br}two`, 'single_line') }).toEqual({
        br,
        problem: expect.any(String),
      });
    }
    for (const br of ['\n', '\r\n', '\r', '\t']) expect(hiddenCharacterProblem(`one${br}two`, 'multi_line')).toBeNull();
    for (const br of ['\u2028', '\u2029', '\u0085', '\u0000', '\u001b', '\u007f']) {
      expect({ br, problem: hiddenCharacterProblem(`one${br}two`, 'multi_line') }).toEqual({
        br,
        problem: expect.any(String),
      });
    }
  });

  it('keeps joiners inside words and emoji, refuses them at an edge or beside a space', () => {
    for (const ok of [
      'می\u200Cخواهم', // Persian: zero-width non-joiner inside a word
      'क्\u200Dष', // Devanagari: joiner after a virama (a combining mark)
      '👨\u200D👩\u200D👧', // an emoji family
      '❤\uFE0F\u200D🔥', // after a variation selector
      'Ada Lovelace',
      'Zoë Ñúñez 中文',
    ]) {
      expect({ ok, problem: hiddenCharacterProblem(ok, 'single_line') }).toEqual({ ok, problem: null });
    }
    for (const bad of ['\u200DAda', 'Ada\u200C', 'Ada \u200D Lovelace', 'A\u200D\u200Db', 'A\u200D\u202Eb']) {
      expect({ bad, problem: hiddenCharacterProblem(bad, 'single_line') }).toEqual({
        bad,
        problem: expect.stringMatching(/invisible formatting/),
      });
    }
  });
});

/** [schema, a body, the dot-path of the field]; other fields may be invalid: only this path is judged. */
const SINGLE_LINE_FIELDS: Array<[string, z.ZodType, Record<string, unknown>, string]> = [
  ['mail recipient_name', SubmitMailForm, {}, 'recipient_name'],
  ['mail recipient_company', SubmitMailForm, {}, 'recipient_company'],
  ['mail recipient_line1', SubmitMailForm, {}, 'recipient_line1'],
  ['mail recipient_line2', SubmitMailForm, {}, 'recipient_line2'],
  ['mail recipient_city', SubmitMailForm, {}, 'recipient_city'],
  ['mail return_name', SubmitMailForm, {}, 'return_name'],
  ['mail return_company', SubmitMailForm, {}, 'return_company'],
  ['mail return_line1', SubmitMailForm, {}, 'return_line1'],
  ['mail return_line2', SubmitMailForm, {}, 'return_line2'],
  ['mail return_city', SubmitMailForm, {}, 'return_city'],
  ['test mail recipient_name', TestMailBody, {}, 'recipient_name'],
  ['MCP send recipient_name', sendTool.input, {}, 'recipient_name'],
  ['MCP send return_line1', sendTool.input, {}, 'return_line1'],
  ['MCP document_filename', sendTool.input, {}, 'document_filename'],
  ['batch job_name', CreateBatchForm, {}, 'job_name'],
  ['agent name', AgentCreateRequest, {}, 'name'],
  ['agent display_name', AgentCreateRequest, {}, 'display_name'],
  ['agent display_name (patch)', AgentPatchRequest, {}, 'display_name'],
  ['member key name', MemberKeyRequest, {}, 'name'],
  ['signup full_name', SignupRequest, {}, 'full_name'],
  ['alias label', AliasCreateRequest, {}, 'label'],
  ['thread title', ThreadUpdateRequest, {}, 'title'],
  ['forward to_name', ForwardRequest, {}, 'to_name'],
  ['forward to_line2', ForwardRequest, {}, 'to_line2'],
  ['package tag', TagBody, {}, 'tag'],
  ['acknowledgment run_id', AcknowledgmentBody, {}, 'run_id'],
  ['webhook endpoint name', EndpointCreateRequest, {}, 'name'],
  ['webhook endpoint name (patch)', EndpointPatchRequest, {}, 'name'],
  ['webhook rule name', RuleRequest, { terms: ['notice'] }, 'name'],
  [
    'support attachment filename',
    SupportMessageBody,
    { body: 'hi', attachments: [{ content_type: 'text/plain', content_base64: 'aGk=' }] },
    'attachments.0.filename',
  ],
  ['facility message subject', FacilityMessageBody, { body: 'hi' }, 'subject'],
  ['agent sign-in agent_name', AgentAuthRequest, { email: 'a@example.com' }, 'agent_name'],
  ['OAuth client_name', ClientMetadata, { redirect_uris: ['https://example.com/cb'] }, 'client_name'],
];

const MULTI_LINE_FIELDS: Array<[string, z.ZodType, Record<string, unknown>, string]> = [
  ['mail agent_notes', SubmitMailForm, {}, 'agent_notes'],
  ['MCP send agent_notes', sendTool.input, {}, 'agent_notes'],
  ['agent description', AgentCreateRequest, {}, 'description'],
  ['instructions proposal', ProposalRequest, {}, 'suggested_content'],
  ['instructions proposal reason', ProposalRequest, {}, 'reason'],
  ['support message', SupportMessageBody, {}, 'body'],
  ['package note', NoteBody, {}, 'note'],
  ['action agent_notes', ActionPatchRequest, {}, 'agent_notes'],
  ['clarification answer', ActionPatchRequest, {}, 'respond_to_clarification'],
  ['mail failure', FailedBody, {}, 'message'],
  ['batch failure', FailBody, {}, 'error_message'],
];

const messagesAt = (schema: z.ZodType, body: unknown, path: string) => issuesAt(schema, body, path).join(' | ');

describe('every agent-written text field refuses what reads as something else', () => {
  it.each(SINGLE_LINE_FIELDS)('%s: one line, nothing hidden', (_label, schema, base, path) => {
    expect(issuesAt(schema, setPath(base, path, 'Ada Lovelace'), path)).toEqual([]);
    expect(issuesAt(schema, setPath(base, path, 'می\u200Cخواهم'), path)).toEqual([]);
    for (const [text, pattern] of [
      ['Ada\u202ELovelace', /U\+202E right-to-left override at character 4/],
      ['Ada\u2066Lovelace\u2069', /U\+2066 left-to-right isolate/],
      ['Ada\u200BLovelace', /U\+200B zero-width space/],
      ['Ada\u00ADLovelace', /U\+00AD soft hyphen/],
      ['Ada\u{E0041}Lovelace', /U\+E0041 tag character/],
      ['Ada\nLovelace', /must be a single line/],
      ['Ada\r\nLovelace', /must be a single line/],
      ['Ada\u2028Lovelace', /must be a single line/],
      ['Ada\tLovelace', /control characters/],
    ] as const) {
      expect({ text, messages: messagesAt(schema, setPath(base, path, text), path) }).toEqual({
        text,
        messages: expect.stringMatching(pattern),
      });
    }
  });

  it.each(MULTI_LINE_FIELDS)('%s: line breaks kept, nothing hidden', (_label, schema, base, path) => {
    expect(issuesAt(schema, setPath(base, path, 'Dear Ada,\r\n\r\n\tThe engine is ready.\nCharles'), path)).toEqual([]);
    for (const [text, pattern] of [
      ['Approve\u202E$500\u202C please', /U\+202E right-to-left override/],
      ['two\u2029paragraphs', /U\+2029 paragraph separator/],
      ['hidden\u{E0049}\u{E0047}tags', /tag character/],
      ['a\u001bb', /control characters/],
    ] as const) {
      expect({ text, messages: messagesAt(schema, setPath(base, path, text), path) }).toEqual({
        text,
        messages: expect.stringMatching(pattern),
      });
    }
  });

  it('handling destinations and package forwarding addresses (domain checks)', () => {
    const destination = {
      name: 'Ada',
      address_line1: '1 Main St',
      city: 'Austin',
      state: 'TX',
      postal_code: '78701',
      country: 'US',
    };
    const propose = (d: Record<string, unknown>) =>
      checkProposal({ action_type: 'forward_original', mail_class: 'priority', destination: d } as never, {
        kind: 'letter',
        status: 'received',
      });
    expect(propose(destination)).toMatchObject({ ok: true });
    expect(propose({ ...destination, address_line2: 'Apt\u202E 7' })).toMatchObject({
      ok: false,
      fields: [{ path: 'destination.address_line2', message: expect.stringMatching(/U\+202E/) }],
    });
    expect(propose({ ...destination, name: 'Ada\nEvil Corp' })).toMatchObject({
      ok: false,
      fields: [{ path: 'destination.name', message: expect.stringMatching(/single line/) }],
    });
    const forward = { to_name: 'Ada', to_line1: '1 Main St', to_city: 'Austin', to_state: 'TX', to_zip: '78701' };
    expect(checkForwardAddress(forward)).toMatchObject({ ok: true });
    expect(checkForwardAddress({ ...forward, to_line1: '1 Main\u2067 St' }, 'parameters.')).toMatchObject({
      ok: false,
      fields: [{ path: 'parameters.to_line1', message: expect.stringMatching(/U\+2067/) }],
    });
  });

  it('a batch CSV row with a hidden character is skipped with the reason, the others stay', () => {
    const csv = [
      'name,address,address2,city,state,zip',
      'Ada Lovelace,1 Main St,,Austin,TX,78701',
      '"Bob\u202Eyllas",2 Main St,,Austin,TX,78702',
      'Carol,3 Main St,"Apt\u200B4",Austin,TX,78703',
      'Dan,4 Main St,,"Aus\u0007tin",TX,78704',
      // A line break inside the address cell still splits it into address and address2 (documented).
      'Eve,"5 Main St\nApt 5",,Austin,TX,78705',
    ].join('\n');
    const r = parseRecipientsCsv(Buffer.from(csv));
    expect(r.recipients.map((x) => [x.row, x.name, x.line1, x.line2])).toEqual([
      [2, 'Ada Lovelace', '1 Main St', null],
      [6, 'Eve', '5 Main St', 'Apt 5'],
    ]);
    expect(r.skipped_rows).toEqual([
      {
        row: 3,
        field: 'name',
        value: 'Bob\u202Eyllas',
        error: expect.stringMatching(/U\+202E right-to-left override/),
      },
      { row: 4, field: 'address2', value: 'Apt\u200B4', error: expect.stringMatching(/U\+200B zero-width space/) },
      { row: 5, field: 'city', value: 'Aus\u0007tin', error: expect.stringMatching(/control characters/) },
    ]);
  });
});
