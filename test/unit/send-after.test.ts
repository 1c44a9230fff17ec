// Scheduled send's pure rules: the window a send_after must fall in, how long a workflow
// still holds a piece, and which rows the facility may not see yet.
import {
  heldFromFacility,
  holdRemainingMs,
  SEND_AFTER_MAX_DAYS,
  sendAfterProblem,
} from '../../domain/workflow-safe/send-after';

const now = new Date('2026-03-01T12:00:00Z');
const DAY = 86_400_000;

describe('send_after window', () => {
  it('takes a time in the future up to 180 days ahead, the last millisecond included', () => {
    expect(SEND_AFTER_MAX_DAYS).toBe(180);
    expect(sendAfterProblem(new Date(now.getTime() + 1), now)).toBeNull();
    expect(sendAfterProblem(new Date(now.getTime() + 180 * DAY), now)).toBeNull();
  });

  it('refuses now, the past and anything beyond 180 days', () => {
    expect(sendAfterProblem(now, now)).toBe('must be in the future');
    expect(sendAfterProblem(new Date(now.getTime() - 60_000), now)).toBe('must be in the future');
    expect(sendAfterProblem(new Date(now.getTime() + 180 * DAY + 1), now)).toBe('must be at most 180 days ahead');
    expect(sendAfterProblem(new Date('not a date'), now)).toMatch(/ISO 8601/);
  });

  it('compares instants, whatever offset the time was written with', () => {
    // 13:00+02:00 is 11:00Z: an hour before now.
    expect(sendAfterProblem(new Date('2026-03-01T13:00:00+02:00'), now)).toBe('must be in the future');
    expect(sendAfterProblem(new Date('2026-03-01T08:00:00-05:00'), now)).toBe(null);
  });
});

describe('the hold', () => {
  it('lasts until send_after and never goes below zero', () => {
    expect(holdRemainingMs('2026-03-01T12:00:05Z', now.getTime())).toBe(5000);
    expect(holdRemainingMs('2026-03-01T11:00:00Z', now.getTime())).toBe(0);
  });

  it('hides a row with send_after until its workflow released it', () => {
    expect(heldFromFacility({ send_after: null, released_to_facility_at: null })).toBe(false);
    expect(heldFromFacility({ send_after: now, released_to_facility_at: null })).toBe(true);
    expect(heldFromFacility({ send_after: now, released_to_facility_at: now })).toBe(false);
  });
});
