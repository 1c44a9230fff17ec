// Outbound mail and mail-run settings: read once from the environment by loadConfig,
// with the documented defaults, and refused at start when malformed.
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../config';

describe('outbound mail and mail-run settings', () => {
  it("defaults to 30 days of approval, a 30 s reconciler, the spec's 300 s run window and a temp preview cache", () => {
    const config = loadConfig({});
    expect(config.outboundMail).toEqual({
      approvalTimeoutSeconds: 30 * 86400,
      reconcileEverySeconds: 30,
      reconcileGraceSeconds: 30,
    });
    expect(config.mailRunWindowSeconds).toBe(300);
    expect(config.previewCacheDir).toBe(path.join(tmpdir(), 'postal-mail-previews'));
  });

  it('takes every setting from the environment', () => {
    const config = loadConfig({
      MAIL_APPROVAL_TIMEOUT_SECONDS: '2',
      MAIL_RECONCILE_EVERY_SECONDS: '3',
      MAIL_RECONCILE_GRACE_SECONDS: '4',
      MAIL_RUN_WINDOW_SECONDS: '5',
      PREVIEW_CACHE_DIR: '/var/cache/previews',
    });
    expect(config.outboundMail).toEqual({
      approvalTimeoutSeconds: 2,
      reconcileEverySeconds: 3,
      reconcileGraceSeconds: 4,
    });
    expect([config.mailRunWindowSeconds, config.previewCacheDir]).toEqual([5, '/var/cache/previews']);
  });

  it.each([
    ['MAIL_APPROVAL_TIMEOUT_SECONDS', '0'],
    ['MAIL_RECONCILE_EVERY_SECONDS', 'soon'],
    ['MAIL_RECONCILE_GRACE_SECONDS', '1.5'],
    ['MAIL_RUN_WINDOW_SECONDS', '-300'],
  ])('refuses to start with %s=%s', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });
});
