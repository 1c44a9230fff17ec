import {
  commitsImmediately,
  fundingBlock,
  isSettledMailRun,
  MAIL_RUN_ID_PATTERN,
  pendingReasonAction,
  settingsBlock,
} from '../../domain/workflow-safe/mail-runs';
import { moveAllowed } from '../../domain/workflow-safe/mail-rules';

const allowed = { business: true, agentAutoFill: true };

describe('Business mail run rules', () => {
  it('commits priority and the overnight classes immediately and no other class', () => {
    expect(['priority', 'carrierx_overnight', 'carriery_next_day'].map(commitsImmediately)).toEqual([true, true, true]);
    expect(
      ['first_class', 'certified', 'carrierx_2day', 'carriery_2day', 'carrierx_express'].some(commitsImmediately),
    ).toBe(false);
  });

  it('needs Business status first, then Agent Auto-Fill', () => {
    expect(settingsBlock({ business: false, agentAutoFill: false })).toBe('business_required');
    expect(settingsBlock({ business: true, agentAutoFill: false })).toBe('agent_auto_fill_not_authorised');
    expect(settingsBlock(allowed)).toBeNull();
  });

  it('funds only when settings, the daily cap and the balance all allow it, in that order', () => {
    const base = {
      settings: allowed,
      requiredCents: 1000,
      balanceCents: 1000,
      dailySpendLimitCents: null,
      spentLast24hCents: 0,
    };
    expect(fundingBlock(base)).toBeNull();
    expect(fundingBlock({ ...base, balanceCents: 999 })).toBe('insufficient_credits');
    expect(fundingBlock({ ...base, dailySpendLimitCents: 1500, spentLast24hCents: 501, balanceCents: 0 })).toBe(
      'daily_spend_limit',
    );
    expect(fundingBlock({ ...base, dailySpendLimitCents: 1500, spentLast24hCents: 500 })).toBeNull();
    expect(fundingBlock({ ...base, settings: { business: true, agentAutoFill: false }, balanceCents: 0 })).toBe(
      'agent_auto_fill_not_authorised',
    );
    expect(fundingBlock({ ...base, requiredCents: 0, balanceCents: 0 })).toBeNull();
  });

  it('tells the human what to do for every pending reason', () => {
    expect(pendingReasonAction('insufficient_credits')).toContain('billing_url');
    expect(pendingReasonAction('daily_spend_limit')).toContain('daily spend cap');
    expect(pendingReasonAction('agent_auto_fill_not_authorised')).toContain('Auto-Fill');
    expect(pendingReasonAction('business_required')).toContain('Business');
  });

  it('settles on funded, closed and cancelled only', () => {
    expect(['open', 'funding_pending', 'funded', 'closed', 'cancelled'].map(isSettledMailRun)).toEqual([
      false,
      false,
      true,
      true,
      true,
    ]);
  });

  it('accepts URL-safe run ids of 1-100 characters', () => {
    expect(MAIL_RUN_ID_PATTERN.test('3f2b1c0e-8a7d-4e6f-9b1a-2c3d4e5f6a7b')).toBe(true);
    expect(MAIL_RUN_ID_PATTERN.test('run.2026:01_a')).toBe(true);
    expect(MAIL_RUN_ID_PATTERN.test('a'.repeat(100))).toBe(true);
    expect(MAIL_RUN_ID_PATTERN.test('a'.repeat(101))).toBe(false);
    expect(['', '-lead', 'has space', 'a/b', 'é'].some((id) => MAIL_RUN_ID_PATTERN.test(id))).toBe(false);
  });

  it('lets the sender cancel a child waiting for funding', () => {
    expect(moveAllowed('cancel', 'funding_pending')).toBe(true);
    expect(moveAllowed('printed', 'funding_pending')).toBe(false);
    expect(moveAllowed('approve', 'funding_pending')).toBe(false);
  });
});
