// The Go SDK (sdk/go) inside npm test: starts the app on the test stack, makes the accounts the
// Go tests need, and runs `go test ./...` in sdk/go with them in POSTAL_* variables (see
// sdk/go/integration_test.go). Every answer the Go client receives passes through this
// process's app server, so the contract check sees it too.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestApp, TestApp } from '../helpers/app';
import { newMember } from '../helpers/factories';
import { createFacility } from '../../services/accounts/accounts';
import { letterPdf, newSender } from '../integration/mail-helpers';
import { pdf, testKeyFor } from '../integration/batch-helpers';

const GO_DIR = path.join(__dirname, '..', '..', 'sdk', 'go');

jest.setTimeout(600_000);

let app: TestApp;
let limited: TestApp;

beforeAll(async () => {
  [app, limited] = await Promise.all([
    startTestApp({ env: { WEBHOOK_RETRY_BASE_MS: '50' } }),
    // Two-second windows: a 429's Retry-After is at most 2 s.
    startTestApp({ worker: false, env: { RATE_LIMIT_WINDOW_SECONDS: '2' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([app?.close(), limited?.close()]);
});

function goTest(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('go', ['test', '-count=1', '-v', './...'], {
      cwd: GO_DIR,
      env: { ...process.env, ...env, CGO_ENABLED: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

it('passes go test ./... in sdk/go against the running app', async () => {
  const facility = await createFacility(app.deps, 'Go SDK Facility');
  const [sender, approver, poor, sandboxMember, rateLimited] = await Promise.all([
    newSender(app, { creditsCents: 100000, facilityId: facility.facility_id }),
    newSender(app, { creditsCents: 100000, facilityId: facility.facility_id, credential: { force_approval: true } }),
    newSender(app, { creditsCents: 0, facilityId: facility.facility_id }),
    newMember(app.deps),
    newSender(limited, { environment: 'test' }),
  ]);
  // One request per window for this key (set after the set-up requests were made).
  await limited.deps.db.query(`UPDATE members SET rate_limit_per_minute = 1 WHERE id = $1`, [rateLimited.memberId]);
  const dir = mkdtempSync(path.join(tmpdir(), 'go-sdk-'));
  const letter = path.join(dir, 'letter.pdf');
  const postcard = path.join(dir, 'postcard.pdf');
  writeFileSync(letter, await letterPdf(2));
  writeFileSync(postcard, await pdf(1));

  const { code, output } = await goTest({
    POSTAL_BASE_URL: app.baseUrl,
    POSTAL_AGENT_KEY: sender.key,
    POSTAL_APPROVAL_AGENT_KEY: approver.key,
    POSTAL_MEMBER_KEY: approver.memberKey,
    POSTAL_AGENT_ID: approver.agentId,
    POSTAL_POOR_AGENT_KEY: poor.key,
    POSTAL_TEST_MEMBER_KEY: await testKeyFor(app.deps, sandboxMember.member_id),
    POSTAL_LIMITED_BASE_URL: limited.baseUrl,
    POSTAL_LIMITED_KEY: rateLimited.key,
    POSTAL_LETTER_PDF: letter,
    POSTAL_POSTCARD_PDF: postcard,
  });
  if (code !== 0) throw new Error(`go test failed (${code}):\n${output}`);
  // Every test ran against the app: none skipped for want of the environment.
  expect(output).not.toMatch(/--- SKIP/);
  for (const name of [
    'TestSendDryRunFromBytesReaderAndPath',
    'TestLiveSendWithApproval',
    'TestBatch',
    'TestTypedErrors',
    'TestStandardWebhookDelivery',
    'TestAgentWebhookDelivery',
    'TestRetryOn429ReusesTheIdempotencyKey',
  ])
    expect(output).toContain(`--- PASS: ${name}`);
});
