// Request and response schemas of the public onboarding routes: signup, waitlist, lead
// status and the discovery directory.
import { z } from 'zod';
import { LEAD_ID_PATTERN, LEAD_SOURCES, LEAD_STAGES } from '../../../domain/accounts/onboarding';
import { singleLine } from '../../schemas/common';

const LeadId = z.string().regex(LEAD_ID_PATTERN, { message: 'must match ^wl_[a-f0-9]{16}$' });

export const SignupRequest = z.strictObject({
  email: z.email({ message: 'must be an email address' }).max(254),
  password: z.string().min(8, { message: 'must be at least 8 characters' }).max(256),
  full_name: singleLine(
    z.string().trim().min(2, { message: 'must be 2-100 characters' }).max(100, { message: 'must be 2-100 characters' }),
  ),
  needs: z.string().max(2000).optional(),
  lead_id: LeadId.optional(),
});

export const WaitlistRequest = z.strictObject({
  email: z.email({ message: 'must be an email address' }).max(254),
  needs: z.string().max(2000).optional(),
  preferred_location: z.string().max(200).optional(),
  callback_url: z
    .url({ protocol: /^https$/, message: 'must be an https URL' })
    .max(2048)
    .optional(),
  agent_id: z.string().max(200).optional(),
  operator_contact: z.string().max(500).optional().describe("Only with the operator's consent."),
});

export const LeadParams = z.object({ leadId: LeadId });

const AgentResources = z.object({
  discovery_url: z.string(),
  openapi_url: z.string(),
  llms_txt_url: z.string(),
  agent_card_url: z.string(),
  auth_guide_url: z.string(),
  mcp_url: z.string(),
});

const HumanAction = z.object({
  step: z.enum(['verify_email', 'verify_phone', 'add_payment', 'select_plan']),
  summary: z.string(),
  blocker: z.boolean().describe('true when live API keys cannot be issued before this step'),
});

export const SignupResponse = z.object({
  success: z.literal(true),
  lead_id: z.string().optional().describe('present when the signup stitched a waitlist lead'),
  message: z.string(),
  next_steps: z.object({ verify_email: z.string(), complete_kyc: z.string().describe('URL'), after_kyc: z.string() }),
  human_action_required: z.array(HumanAction),
  relay_message: z.string().describe('one sentence for the agent to relay to its human'),
  status_url: z.string().optional().describe('present when a lead was stitched; pollable without auth'),
  agent_resources: AgentResources,
  contact: z.object({ owner_email: z.string() }),
  test_mode: z.boolean(),
});

export const WaitlistResponse = z.object({
  lead_id: z.string(),
  stage: z.enum(LEAD_STAGES),
  message: z.string(),
  status_url: z.string(),
  agent_resources: AgentResources,
  next: z.object({ signup_url: z.string(), hint: z.string() }),
  return_channel: z.object({
    type: z.literal('poll'),
    status_url: z.string(),
    callback_url: z.string().nullable(),
    hint: z.string(),
  }),
  contact: z.object({ owner_email: z.string() }),
  test_mode: z.boolean(),
});

export const LeadStatusResponse = z.object({
  lead_id: z.string(),
  stage: z.enum(LEAD_STAGES),
  has_account: z.boolean(),
  created_at: z.string(),
  source: z.enum(LEAD_SOURCES),
  age_days: z.number().int(),
  next_step: z.object({ action: z.string(), url: z.string(), hint: z.string() }).nullable(),
  agent_resources: AgentResources,
  contact: z.object({ owner_email: z.string(), instruction_for_agent: z.string() }),
  human_action_required: z
    .array(HumanAction)
    .optional()
    .describe(
      'once the lead has an account: the human steps still open (verify_email is gone once the signup address is verified by its emailed link)',
    ),
  test_mode: z.boolean(),
});

export const DirectoryResponse = z.object({
  name: z.string(),
  api_version: z.string(),
  base_url: z.string(),
  site_url: z.string(),
  documents: z.record(z.string(), z.string()).describe('discovery documents at the site root'),
  agent_auth_url: z.string().describe('POST: verified-email sign-in intent (issues no live credentials)'),
  mcp_url: z.string(),
  a2a_url: z.string().describe('the A2A server (JSON-RPC); its card is documents.a2a_agent_card'),
  endpoints: z.array(
    z.object({
      method: z.string(),
      path: z.string(),
      summary: z.string(),
      tags: z.array(z.string()),
      auth: z.array(z.string()).describe('"public" or the key kinds allowed'),
      scopes: z.array(z.string()).describe('agent keys need all of these'),
      any_scope: z.array(z.string()).describe('agent keys need one of these'),
      live_only: z.boolean(),
      test_only: z.boolean(),
      sandbox_unsupported: z.boolean(),
      version_guard: z.boolean().describe('agent keys send X-Service-MD-Version'),
    }),
  ),
  test_mode: z.boolean(),
});
