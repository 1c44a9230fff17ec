// Signup and waitlist rules: lead ids, the steps a human must take before live keys
// exist, and the next step a lead's stage points to. Pure; URLs are passed in.
import { randomBytes } from 'node:crypto';

export const LEAD_ID_PATTERN = /^wl_[a-f0-9]{16}$/;

export const LEAD_STAGES = ['waitlisted', 'account_created', 'email_verified', 'active', 'unknown'] as const;
export type LeadStage = (typeof LEAD_STAGES)[number];

export const LEAD_SOURCES = ['web', 'api', 'agent'] as const;
export type LeadSource = (typeof LEAD_SOURCES)[number];

export function newLeadId(): string {
  return `wl_${randomBytes(8).toString('hex')}`;
}

export interface OnboardingUrls {
  signupUrl: string;
  verifyEmailUrl: string;
  kycUrl: string;
  billingUrl: string;
  plansUrl: string;
}

export interface HumanAction {
  step: 'verify_email' | 'verify_phone' | 'add_payment' | 'select_plan';
  summary: string;
  /** True when live API keys cannot be issued until the step is done. */
  blocker: boolean;
}

/** What the human must do after signup; every blocker stands between the account and live keys. */
export function humanActionsAfterSignup(urls: OnboardingUrls): HumanAction[] {
  return [
    {
      step: 'verify_email',
      summary: `Open the verification link sent to the signup address (or visit ${urls.verifyEmailUrl}).`,
      blocker: true,
    },
    {
      step: 'verify_phone',
      summary: `Confirm a mobile number during identity verification at ${urls.kycUrl}.`,
      blocker: true,
    },
    {
      step: 'add_payment',
      summary: `Add a payment method and buy prepaid credits at ${urls.billingUrl}.`,
      blocker: true,
    },
    {
      step: 'select_plan',
      summary: `Choose a plan at ${urls.plansUrl}; the standard plan applies until another is chosen.`,
      blocker: false,
    },
  ];
}

/** The steps still open at a stage: verify_email is done from email_verified on; nothing is left once active. */
export function humanActionsOpen(stage: LeadStage, urls: OnboardingUrls): HumanAction[] {
  if (stage === 'active') return [];
  const verified = stage === 'email_verified';
  return humanActionsAfterSignup(urls).filter((a) => !(verified && a.step === 'verify_email'));
}

export interface NextStep {
  action: string;
  url: string;
  hint: string;
}

/** The one thing that moves a lead forward from its stage; null once active. */
export function leadNextStep(stage: LeadStage, urls: OnboardingUrls): NextStep | null {
  switch (stage) {
    case 'waitlisted':
      return {
        action: 'signup',
        url: urls.signupUrl,
        hint: 'Create the account with POST /v1/signup and pass this lead_id so the reservation carries over.',
      };
    case 'account_created':
      return {
        action: 'verify_email',
        url: urls.verifyEmailUrl,
        hint: 'The human opens the verification link sent to the signup address.',
      };
    case 'email_verified':
      return {
        action: 'complete_kyc',
        url: urls.kycUrl,
        hint: 'The human completes identity verification and adds a payment method; live keys follow.',
      };
    case 'active':
      return null;
    case 'unknown':
      return {
        action: 'contact_owner',
        url: urls.signupUrl,
        hint: 'The lead state is unclear; ask the service owner (contact.owner_email).',
      };
  }
}

export function ageDays(createdAt: Date, now: Date = new Date()): number {
  return Math.max(0, Math.floor((now.getTime() - createdAt.getTime()) / 86_400_000));
}
