// Secrets the service checks are compared in constant time. Where the service checks a
// presented secret (API keys, the intake secret, passwords) the test names the function
// and the constant-time primitive it must use; a scan of all server code then refuses
// `===`, `!==` and Buffer `.equals()` on anything named like a secret, token, password,
// signature or digest, apart from a short list of comparisons that are not secrets (each
// with its reason).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { safeEqual } from '../../domain/accounts/keys';
import { hashPassword, verifyPassword } from '../../domain/accounts/passwords';

const ROOT = path.resolve(__dirname, '..', '..');
const SERVER_DIRS = ['api', 'services', 'domain', 'activities', 'workflows', 'worker'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

const read = (rel: string) => readFileSync(path.join(ROOT, rel), 'utf8');

/** The body of `function name(` ... up to the next top-level `\n}`. */
function functionBody(source: string, name: string): string {
  const start = source.search(new RegExp(`function ${name}\\(`));
  if (start < 0) throw new Error(`function ${name} not found`);
  const end = source.indexOf('\n}', start);
  return source.slice(start, end);
}

const SECRETISH = '(?:secret|password|passwd|signature|token|hmac|digest|challenge|apikey|rawkey)';
const OPERAND = `[\\w$.?\\[\\]]*`;
const COMPARISON = new RegExp(
  `(${OPERAND}${SECRETISH}\\w*\\s*[!=]==|[!=]==\\s*${OPERAND}${SECRETISH}\\w*|${OPERAND}${SECRETISH}\\w*\\.equals\\()`,
  'i',
);

/** Comparisons that are not of secrets: file -> a fragment of the line, and why. */
const NOT_SECRETS: Array<{ file: string; fragment: string; why: string }> = [
  {
    file: 'services/webhooks/deliveries.ts',
    fragment: 'parsed.challenge === challenge',
    why: 'the verification challenge is sent to the receiver and echoed back; only the URL owner ever sees it, so there is nothing to guess by timing',
  },
];

describe('constant-time comparison of secrets', () => {
  it('safeEqual compares fixed-length digests with timingSafeEqual', () => {
    const body = functionBody(read('domain/accounts/keys.ts'), 'safeEqual');
    expect(body).toMatch(/timingSafeEqual\(/);
    expect(body).toMatch(/createHash\('sha256'\)/);
    expect(safeEqual('whsec_abc', 'whsec_abc')).toBe(true);
    expect(safeEqual('whsec_abc', 'whsec_abd')).toBe(false);
    expect(safeEqual('whsec_abc', 'whsec_abcd')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
  });

  it('the intake secret is checked with safeEqual', () => {
    const body = functionBody(read('services/inbound-email/intake.ts'), 'assertIntakeSecret');
    expect(body).toMatch(/safeEqual\(presented, deps\.config\.intakeSecret\)/);
  });

  it('passwords are checked with timingSafeEqual on scrypt output', async () => {
    const body = functionBody(read('domain/accounts/passwords.ts'), 'verifyPassword');
    expect(body).toMatch(/timingSafeEqual\(derived, expected\)/);
    const stored = await hashPassword('correct horse battery staple');
    await expect(verifyPassword('correct horse battery staple', stored)).resolves.toBe(true);
    await expect(verifyPassword('correct horse battery stapler', stored)).resolves.toBe(false);
  });

  it('API keys are never compared in code: the SHA-256 of the presented key is looked up', () => {
    const body = functionBody(read('services/accounts/auth.ts'), 'authenticate');
    expect(body).toMatch(/const hash = hashKey\(parsed\.token\)/);
    expect(body.match(/WHERE \w+\.key_hash = \$1/g)?.length).toBe(3);
    expect(body).not.toMatch(/parsed\.token\s*[!=]==/);
  });

  it('no server code compares a secret, token, signature or digest with ===, !== or .equals()', () => {
    const files = SERVER_DIRS.flatMap((d) => sourceFiles(path.join(ROOT, d)));
    expect(files.length).toBeGreaterThan(50);
    const hits: string[] = [];
    for (const file of files) {
      const rel = path.relative(ROOT, file);
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          // Presence, type and literal checks compare no secret value.
          const code = line
            .replace(/\/\/.*$/, '')
            .replace(/\s*[!=]==\s*'[^']*'/g, '')
            .replace(/[\w$.?]+\s*[!=]==\s*(null|undefined|true|false|\d+)\b/g, '');
          if (!COMPARISON.test(code)) return;
          if (NOT_SECRETS.some((n) => n.file === rel && code.includes(n.fragment))) return;
          hits.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(hits).toEqual([]);
    // Every exception still names a line that exists.
    for (const n of NOT_SECRETS) expect(read(n.file)).toContain(n.fragment);
  });

  it('the scan finds what it looks for', () => {
    expect(COMPARISON.test('if (presented === deps.config.intakeSecret) {')).toBe(true);
    expect(COMPARISON.test('return sig !== expectedSignature;')).toBe(true);
    expect(COMPARISON.test('if (providedToken.equals(stored)) {')).toBe(true);
    expect(COMPARISON.test("if (row.status === 'active') {")).toBe(false);
    expect(COMPARISON.test('return secret === presented;')).toBe(true);
  });
});
