// "Must contain a visible character": text made only of zero-width, format, filler,
// combining or whitespace characters shows nothing, so every non-blank rule (names,
// labels, tags, notes, terms, messages, address lines) refuses it with its field path.
import type { z } from 'zod';
import { hasVisibleCharacter } from '../../domain/workflow-safe/visible-text';
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
import { EndpointCreateRequest, RuleRequest } from '../../api/routes/webhooks/webhooks.schemas';
import { SupportMessageBody } from '../../api/routes/support/support';
import { FacilityMessageBody } from '../../api/routes/support/facility-messages';
import { AgentAuthRequest } from '../../api/discovery/surfaces';
import { registeredTools } from '../../api/mcp/tools';

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
