// The lint's guards (eslint.config.mjs): the workflow guard refuses what would break the
// workflow sandbox and lets through what workflow code legitimately imports; the settings
// guard refuses process.env outside config.ts and the runners.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** The messages of `ruleId` that ESLint gives `code` as if it were `file` (an existing file, so the type-aware parser finds it in the project). ESLint runs as its CLI: its config is an ES module, which Jest's module sandbox cannot load. */
async function ruleErrors(ruleId: string, file: string, code: string): Promise<string[]> {
  const run = spawnSync(
    path.join(ROOT, 'node_modules', '.bin', 'eslint'),
    ['--stdin', '--stdin-filename', path.join(ROOT, file), '-f', 'json'],
    { cwd: ROOT, input: code, encoding: 'utf8' },
  );
  const [result] = JSON.parse(run.stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return result.messages.filter((m) => m.ruleId === ruleId).map((m) => m.message);
}

const importErrors = (file: string, code: string) => ruleErrors('@typescript-eslint/no-restricted-imports', file, code);

describe('workflow import guard', () => {
  jest.setTimeout(60_000);

  it('refuses Node built-ins, config, activities and other domain modules in workflow code, and admits the rest', async () => {
    const errors = await importErrors(
      'workflows/operations/maintenance.ts',
      [
        "import { createHash } from 'node:crypto';",
        "import { loadConfig } from '../../config';",
        "import { createMailActivities } from '../../activities/outbound-mail/mail';",
        "import { encryptSecret } from '../../domain/shared/secrets';",
        "import { pricing } from '../../domain/outbound-mail/pricing';",
        // Allowed: the workflow API, contracts, type-only imports, workflow-safe domain rules.
        "import { proxyActivities } from '@temporalio/workflow';",
        "import type { createMailRunActivities } from '../../activities/mail-runs/mail-run';",
        "import { outboundMailWorkflowId } from '../outbound-mail/contracts';",
        "import { handlerTurns } from '../shared/operator-cancellation';",
        "import { moveAllowed } from '../../domain/workflow-safe/mail-rules';",
        'export const probe = [createHash, loadConfig, createMailActivities, encryptSecret, pricing, proxyActivities, outboundMailWorkflowId, handlerTurns, moveAllowed] as unknown as ReturnType<typeof createMailRunActivities>;',
      ].join('\n'),
    );
    const refused = errors.map((m) => /^'([^']+)'/.exec(m)?.[1]);
    expect(refused).toEqual([
      'node:crypto',
      '../../config',
      '../../activities/outbound-mail/mail',
      '../../domain/shared/secrets',
      '../../domain/outbound-mail/pricing',
    ]);
    expect(errors[0]).toMatch(/Workflow code may import only/);
  });

  it('holds the top-level workflow modules to the same rule', async () => {
    const errors = await importErrors(
      'workflows/index.ts',
      [
        "import { loadConfig } from '../config';",
        "import { encryptSecret } from '../domain/shared/secrets';",
        "export * from './outbound-mail/mail';",
        "import { moveAllowed } from '../domain/workflow-safe/mail-rules';",
        'export const probe = [loadConfig, encryptSecret, moveAllowed];',
      ].join('\n'),
    );
    expect(errors.map((m) => /^'([^']+)'/.exec(m)?.[1])).toEqual(['../config', '../domain/shared/secrets']);
  });

  it('keeps workflow-safe domain modules from importing anything else', async () => {
    const errors = await importErrors(
      'domain/workflow-safe/mail-rules.ts',
      "import { randomUUID } from 'node:crypto';\nexport const probe = randomUUID;\n",
    );
    expect(errors).toHaveLength(1);
  });
});

describe('settings guard', () => {
  jest.setTimeout(60_000);

  /** Every way of reaching the environment the guard knows. */
  const READS_ENV = [
    "import { env as nodeEnv } from 'node:process';",
    'const { env } = process;',
    "export const probe = [process.env.PREVIEW_CACHE_DIR, process['env'].TRUST_PROXY, env, nodeEnv];",
  ].join('\n');

  it('refuses process.env in a service file, however it is reached', async () => {
    const errors = await ruleErrors('no-restricted-syntax', 'services/accounts/keys.ts', READS_ENV);
    expect(errors).toHaveLength(4);
    expect(errors[0]).toMatch(/config\.ts/);
  });

  it('lets config.ts read the environment', async () => {
    expect(await ruleErrors('no-restricted-syntax', 'config.ts', READS_ENV)).toEqual([]);
  });
});
