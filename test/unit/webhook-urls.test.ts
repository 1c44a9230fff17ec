import { isPublicAddress, parseIp, webhookUrlProblem } from '../../domain/webhooks/urls';

describe('webhook URL rules (production mode)', () => {
  it.each([
    ['https://127.0.0.1/hook', /private/],
    ['https://10.0.0.1/hook', /private/],
    ['https://169.254.169.254/latest/meta-data', /private/],
    ['https://[::1]/hook', /private/],
    ['https://[::ffff:127.0.0.1]/hook', /private/],
    ['https://[fd00:ec2::254]/hook', /private/],
    ['https://0x7f.1/hook', /private/], // 127.0.0.1 in hex shorthand
    ['https://2130706433/hook', /private/], // 127.0.0.1 as one number
    ['https://localhost/hook', /public host/],
    ['https://api.localhost/hook', /public host/],
    ['https://metadata.google.internal/hook', /public host/],
    ['https://intranet/hook', /public host/],
    ['http://hooks.example.com/hook', /https/],
    ['https://hooks.example.com:8443/hook', /port 443/],
    ['https://user:pw@hooks.example.com/hook', /credentials/],
    ['not a url', /absolute URL/],
  ])('refuses %s for custom endpoints', (url, problem) => {
    expect(webhookUrlProblem(url, 'endpoint', false)).toMatch(problem);
  });

  it('accepts public HTTPS on 443, explicit or implied', () => {
    expect(webhookUrlProblem('https://hooks.example.com/postal', 'endpoint', false)).toBeNull();
    expect(webhookUrlProblem('https://hooks.example.com:443/postal', 'endpoint', false)).toBeNull();
    expect(webhookUrlProblem('https://8.8.8.8/postal', 'endpoint', false)).toBeNull();
  });

  it('lets legacy agent webhooks use another HTTPS port', () => {
    expect(webhookUrlProblem('https://hooks.example.com:8443/x', 'agent_webhook', false)).toBeNull();
    expect(webhookUrlProblem('https://10.1.2.3:8443/x', 'agent_webhook', false)).toMatch(/private/);
  });

  it('allows http://127.0.0.1:<port> only with WEBHOOKS_ALLOW_INSECURE_LOCAL', () => {
    expect(webhookUrlProblem('http://127.0.0.1:4000/hook', 'endpoint', true)).toBeNull();
    expect(webhookUrlProblem('http://127.0.0.1:4000/hook', 'endpoint', false)).not.toBeNull();
    expect(webhookUrlProblem('ftp://127.0.0.1/hook', 'endpoint', true)).toMatch(/http/);
  });
});

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '198.18.0.1',
    '::',
    '::1',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '64:ff9b::a00:1',
    '2002:a00:1::',
    '2001:db8::1',
    '::127.0.0.1',
  ])('%s is not public', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8'])(
    '%s is public',
    (ip) => {
      expect(isPublicAddress(ip)).toBe(true);
    },
  );

  it('parses IPv6 forms and refuses garbage', () => {
    expect(parseIp('::ffff:1.2.3.4')).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4]);
    expect(parseIp('1::')).toHaveLength(16);
    expect(parseIp('1:2:3:4:5:6:7:8')).toHaveLength(16);
    for (const bad of [
      '1:2:3:4:5:6:7:8:9',
      '1::2::3',
      'gggg::1',
      '256.1.1.1',
      '1.2.3',
      'example.com',
      'fe80::1%eth0',
    ]) {
      expect(parseIp(bad)).toBeNull();
    }
    expect(isPublicAddress('not-an-ip')).toBe(false);
  });
});
