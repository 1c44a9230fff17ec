// Signup, waitlist reservations and lead status: the public, unauthenticated surface an
// agent uses for its human. Signup creates the account and nothing else: no API key is
// issued until the human has verified the email, completed KYC and added a payment
// method (live keys are then created by the operator or the dashboard).
import type { Deps } from '../shared/deps';
import { ApiError, errors } from '../../domain/shared/errors';
import { hashPassword } from '../../domain/accounts/passwords';
import { issueEmailVerification } from './email-verification';
import {
  ageDays,
  humanActionsAfterSignup,
  humanActionsOpen,
  HumanAction,
  LeadSource,
  LeadStage,
  leadNextStep,
  NextStep,
  newLeadId,
  OnboardingUrls,
} from '../../domain/accounts/onboarding';
import { sqlRows, sqlRun } from '../shared/sql';
import { insertSignupMember } from './member-rows';
import { insertLead, markLeadAccountCreated } from './waitlist-rows';

export interface SignupInput {
  email: string;
  password: string;
  full_name: string;
  needs?: string;
  lead_id?: string;
}

export interface WaitlistInput {
  email: string;
  needs?: string;
  preferred_location?: string;
  callback_url?: string;
  agent_id?: string;
  operator_contact?: string;
}

export function onboardingUrls(deps: Deps): OnboardingUrls {
  const site = deps.config.siteUrl;
  return {
    signupUrl: `${deps.config.baseUrl}/v1/signup`,
    verifyEmailUrl: `${site}/account/verify-email`,
    kycUrl: `${site}/account/kyc`,
    billingUrl: `${site}/billing#credits`,
    plansUrl: `${site}/billing#plans`,
  };
}

/** Where an agent learns the API: the same links in every onboarding answer. */
export function agentResources(deps: Deps) {
  const { siteUrl, baseUrl } = deps.config;
  return {
    discovery_url: `${baseUrl}/v1`,
    openapi_url: `${siteUrl}/openapi.json`,
    llms_txt_url: `${siteUrl}/llms.txt`,
    agent_card_url: `${siteUrl}/.well-known/agent.json`,
    auth_guide_url: `${siteUrl}/auth.md`,
    mcp_url: `${baseUrl}/mcp`,
  };
}

export function contact(deps: Deps) {
  return { owner_email: deps.config.ownerEmail };
}

export function leadStatusUrl(deps: Deps, leadId: string): string {
  return `${deps.config.baseUrl}/v1/leads/${leadId}`;
}

function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const code = e.code ?? e.driverError?.code;
  const name = e.constraint ?? e.driverError?.constraint;
  return code === '23505' && (!constraint || name === constraint);
}

function emailRegistered(): ApiError {
  return errors.conflict('EMAIL_ALREADY_REGISTERED', 'An account with this email is already registered.', {
    suggestedAction: 'Ask your human to sign in with this email, or sign up with another address.',
  });
}

export interface SignupResult {
  success: true;
  lead_id?: string;
  message: string;
  next_steps: { verify_email: string; complete_kyc: string; after_kyc: string };
  human_action_required: HumanAction[];
  relay_message: string;
  status_url?: string;
  agent_resources: ReturnType<typeof agentResources>;
  contact: ReturnType<typeof contact>;
}

export async function signup(deps: Deps, input: SignupInput): Promise<SignupResult> {
  const email = input.email.trim();
  const passwordHash = await hashPassword(input.password);

  await deps.db.transaction(async (tx) => {
    const [taken] = await sqlRows<{ '?column?': number }>(tx, `SELECT 1 FROM members WHERE lower(email) = lower($1)`, [
      email,
    ]);
    if (taken) throw emailRegistered();
    if (input.lead_id) {
      const [lead] = await sqlRows<{ id: string; member_id: string | null }>(
        tx,
        `SELECT id, member_id FROM waitlist_leads WHERE id = $1 FOR UPDATE`,
        [input.lead_id],
      );
      if (!lead) throw errors.validation([{ path: 'lead_id', message: 'no waitlist lead has this id' }]);
      if (lead.member_id) {
        throw errors.conflict('LEAD_ALREADY_STITCHED', 'This waitlist lead already belongs to an account.', {
          suggestedAction: 'Sign up without lead_id, or sign in to the account the lead already belongs to.',
        });
      }
    }
    let memberId: string;
    try {
      const member = await insertSignupMember(tx, email, input.full_name, passwordHash, input.needs ?? null);
      memberId = member.id;
    } catch (err) {
      // A concurrent signup with the same address won the unique index.
      if (isUniqueViolation(err, 'members_email_lower')) throw emailRegistered();
      throw err;
    }
    if (input.lead_id) {
      await markLeadAccountCreated(tx, input.lead_id, memberId, input.needs ?? null);
    }
    // The verification email commits with the account (its notifier sends it after the commit).
    await issueEmailVerification(deps, tx, { id: memberId, full_name: input.full_name });
  });

  const urls = onboardingUrls(deps);
  return {
    success: true,
    ...(input.lead_id ? { lead_id: input.lead_id } : {}),
    message:
      'Account created. No API keys are issued yet: the human must verify the email address, complete identity verification (KYC) and add a payment method first.',
    next_steps: {
      verify_email: `Open the verification link sent to ${email}.`,
      complete_kyc: urls.kycUrl,
      after_kyc:
        'Once KYC and payment are done, the human receives a member key (sk_live_); with it, create an agent (POST /v1/agents) and an agent credential (POST /v1/agents/{id}/credentials) for you.',
    },
    human_action_required: humanActionsAfterSignup(urls),
    relay_message: `Your Postal Mail account for ${email} is created: please verify your email, complete identity verification at ${urls.kycUrl} and add a payment method, then give me an agent key so I can send mail for you.`,
    ...(input.lead_id ? { status_url: leadStatusUrl(deps, input.lead_id) } : {}),
    agent_resources: agentResources(deps),
    contact: contact(deps),
  };
}

export interface WaitlistResult {
  lead_id: string;
  stage: LeadStage;
  message: string;
  status_url: string;
  agent_resources: ReturnType<typeof agentResources>;
  next: { signup_url: string; hint: string };
  return_channel: { type: 'poll'; status_url: string; callback_url: string | null; hint: string };
  contact: ReturnType<typeof contact>;
}

/**
 * Records a reservation for a receiving address and assigns nothing. Every call makes a
 * new lead: handing back an existing lead for a known email would let anyone who knows
 * the address take over its reservation at signup.
 */
export async function joinWaitlist(deps: Deps, input: WaitlistInput): Promise<WaitlistResult> {
  const source: LeadSource = input.agent_id ? 'agent' : 'api';
  const lead = { id: newLeadId(), stage: 'waitlisted' as LeadStage };
  await insertLead(deps.db, {
    id: lead.id,
    email: input.email.trim(),
    needs: input.needs ?? null,
    preferredLocation: input.preferred_location ?? null,
    callbackUrl: input.callback_url ?? null,
    agentId: input.agent_id ?? null,
    operatorContact: input.operator_contact ?? null,
    source,
  });

  const statusUrl = leadStatusUrl(deps, lead.id);
  const urls = onboardingUrls(deps);
  return {
    lead_id: lead.id,
    stage: lead.stage,
    message: 'Reservation recorded. Issuing physical receiving addresses is not live yet; nothing has been assigned.',
    status_url: statusUrl,
    agent_resources: agentResources(deps),
    next: {
      signup_url: urls.signupUrl,
      hint: `To send mail now, sign up with POST /v1/signup and include "lead_id": "${lead.id}".`,
    },
    return_channel: {
      type: 'poll',
      status_url: statusUrl,
      callback_url: input.callback_url ?? null,
      hint: 'Poll status_url (no authentication) to follow this reservation; the callback_url is kept with the reservation as the return address for the human.',
    },
    contact: contact(deps),
  };
}

export interface LeadStatus {
  lead_id: string;
  stage: LeadStage;
  has_account: boolean;
  created_at: string;
  source: LeadSource;
  age_days: number;
  next_step: NextStep | null;
  agent_resources: ReturnType<typeof agentResources>;
  contact: { owner_email: string; instruction_for_agent: string };
  /** Once the lead has an account: the human steps still open (verify_email goes once the address is verified). */
  human_action_required?: HumanAction[];
}

/** A lead's progress without any personal data (no email, names or contacts). */
export async function getLeadStatus(deps: Deps, leadId: string): Promise<LeadStatus> {
  const [lead] = await sqlRows<{
    id: string;
    stage: string;
    member_id: string | null;
    source: string;
    created_at: Date;
  }>(deps.db, `SELECT id, stage, member_id, source, created_at FROM waitlist_leads WHERE id = $1`, [leadId]);
  if (!lead) throw errors.notFound('Lead');
  const stage = lead.stage as LeadStage;
  return {
    lead_id: lead.id,
    stage,
    has_account: lead.member_id !== null,
    created_at: (lead.created_at as Date).toISOString(),
    source: lead.source as LeadSource,
    age_days: ageDays(lead.created_at as Date),
    next_step: leadNextStep(stage, onboardingUrls(deps)),
    agent_resources: agentResources(deps),
    contact: {
      owner_email: deps.config.ownerEmail,
      instruction_for_agent:
        'Relay next_step to your human; write to owner_email only for questions this API cannot answer.',
    },
    ...(lead.member_id !== null ? { human_action_required: humanActionsOpen(stage, onboardingUrls(deps)) } : {}),
  };
}
