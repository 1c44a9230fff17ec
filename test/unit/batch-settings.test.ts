// BATCH_DRAFT_EXPIRY_SECONDS: read once into the config (the spec's 7 days unless set),
// and a malformed value stops the process at start instead of failing every draft.
import { loadConfig } from '../../config';

describe('batch draft expiry setting', () => {
  it('defaults to 7 days', () => {
    expect(loadConfig({}).batchDraftExpirySeconds).toBe(7 * 24 * 3600);
  });

  it('reads a whole number of seconds', () => {
    expect(loadConfig({ BATCH_DRAFT_EXPIRY_SECONDS: '2' }).batchDraftExpirySeconds).toBe(2);
  });

  it.each(['0', '1.5', 'soon', '-60'])('refuses BATCH_DRAFT_EXPIRY_SECONDS=%s', (value) => {
    expect(() => loadConfig({ BATCH_DRAFT_EXPIRY_SECONDS: value })).toThrow('BATCH_DRAFT_EXPIRY_SECONDS');
  });
});
