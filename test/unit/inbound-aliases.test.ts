import {
  aliasStatusMoveProblem,
  deliveryRefusal,
  randomLocalPart,
  vanityProblem,
} from '../../domain/inbound-email/aliases';

describe('intake alias rules', () => {
  it('makes 16-character base32 local parts that start with a letter', () => {
    const a = randomLocalPart(new Uint8Array(10).fill(0));
    const b = randomLocalPart(Uint8Array.from([255, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    expect(a).toMatch(/^[a-z][a-z2-7]{15}$/);
    expect(b).toMatch(/^[a-z][a-z2-7]{15}$/);
    expect(a).not.toBe(b);
    expect(() => randomLocalPart(new Uint8Array(4))).toThrow();
  });

  it('validates vanity local parts', () => {
    expect(vanityProblem('household-bills')).toBeNull();
    expect(vanityProblem('ab')).toMatch(/3-40/);
    expect(vanityProblem('-bills')).toMatch(/only a-z/);
    expect(vanityProblem('bills+x')).toMatch(/only a-z/);
    expect(vanityProblem('a..b')).toMatch(/repeat/);
    expect(vanityProblem('Postmaster')).toMatch(/reserved/);
  });

  it('never reactivates an archived alias', () => {
    expect(aliasStatusMoveProblem('paused', 'active')).toBeNull();
    expect(aliasStatusMoveProblem('archived', 'active')).toMatch(/cannot be reactivated/);
  });

  it('answers deliveries to paused aliases as temporary and to archived ones as permanent', () => {
    expect(deliveryRefusal('active')).toBeNull();
    expect(deliveryRefusal('paused')).toMatchObject({ code: 'ALIAS_PAUSED', permanent: false });
    expect(deliveryRefusal('archived')).toMatchObject({ code: 'ALIAS_ARCHIVED', permanent: true });
  });
});
