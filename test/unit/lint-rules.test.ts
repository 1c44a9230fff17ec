// The lint's guards (eslint.config.mjs): the workflow guard refuses what would break the
// workflow sandbox and lets through what workflow code legitimately imports; the settings
// guard refuses process.env outside config.ts and the runners; the cycle guard refuses an
// import of a module that imports the importer back.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** Every way of reaching the environment the settings guard knows. */
const READS_ENV = [
  "import { env as nodeEnv } from 'node:process';",
  'const { env } = process;',
  "export const probe = [process.env.PREVIEW_CACHE_DIR, process['env'].TRUST_PROXY, env, nodeEnv];",
].join('\n');

/** The snippets the tests below lint, each as if it were an existing file (so the type-aware parser finds it in the project). */
const CASES = {
  workflowImports: {
    file: 'workflows/operations/maintenance.ts',
    code: [
      "import { createHash } from 'node:crypto';",
      "import { loadConfig } from '../../config';",
      "import { createMailActivities } from '../../activities/outbound-mail/mail';",
      "import { encryptSecret } from '../../domain/shared/secrets';",
      "import { pricing } from '../../domain/outbound-mail/pricing';",
      // Allowed: the workflow API, contracts, type-only imports, workflow-safe domain rules.
      "import { proxyActivities } from '@temporalio/workflow';",
      "import type { createMailRunActivities } from '../../activities/mail-runs/mail-run';",
      "import { outboundMailWorkflowId } from '../outbound-mail/contracts';",
      "import { exclusiveTurns } from '../shared/turns';",
      "import { moveAllowed } from '../../domain/workflow-safe/mail-rules';",
      'export const probe = [createHash, loadConfig, createMailActivities, encryptSecret, pricing, proxyActivities, outboundMailWorkflowId, exclusiveTurns, moveAllowed] as unknown as ReturnType<typeof createMailRunActivities>;',
    ].join('\n'),
  },
  topLevelWorkflowImports: {
    file: 'workflows/index.ts',
    code: [
      "import { loadConfig } from '../config';",
      "import { encryptSecret } from '../domain/shared/secrets';",
      "export * from './outbound-mail/mail';",
      "import { moveAllowed } from '../domain/workflow-safe/mail-rules';",
      'export const probe = [loadConfig, encryptSecret, moveAllowed];',
    ].join('\n'),
  },
  workflowSafeImports: {
    file: 'domain/workflow-safe/mail-rules.ts',
    code: "import { randomUUID } from 'node:crypto';\nexport const probe = randomUUID;\n",
  },
  envInService: { file: 'services/accounts/keys.ts', code: READS_ENV },
  envInConfig: { file: 'config.ts', code: READS_ENV },
  untypedQuery: {
    file: 'services/a2a/tasks.ts',
    code: [
      "import { sqlRows } from '../shared/sql';",
      'declare const db: { query(text: string, params?: unknown[]): Promise<unknown> };',
      "export const probe = [db.query('SELECT 1'), sqlRows<{ n: number }>(db, 'SELECT 1 AS n')];",
    ].join('\n'),
  },
  // address-check.ts imports street-lines.ts (values), so street-lines.ts may not import it back;
  // a type-only import does not run anything at load time and passes.
  importCycle: {
    file: 'domain/outbound-mail/street-lines.ts',
    code: [
      "import { checkUsAddress } from './address-check';",
      "import type { AddressCheck } from './address-check';",
      'export const probe: (typeof checkUsAddress)[] = [];',
      'export type Probe = AddressCheck;',
    ].join('\n'),
  },
};

type Message = { ruleId: string | null; message: string };
let messages: Record<keyof typeof CASES, Message[]>;

/** Lints every case in one ESLint process (test/unit/lint-probe.mjs): one project load instead of one per case. */
beforeAll(() => {
  const names = Object.keys(CASES) as (keyof typeof CASES)[];
  const run = spawnSync(process.execPath, [path.join(__dirname, 'lint-probe.mjs')], {
    cwd: ROOT,
    input: JSON.stringify(names.map((name) => ({ file: path.join(ROOT, CASES[name].file), code: CASES[name].code }))),
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`lint-probe.mjs failed: ${run.stderr}`);
  const results = JSON.parse(run.stdout) as Message[][];
  messages = Object.fromEntries(names.map((name, i) => [name, results[i]])) as typeof messages;
}, 120_000);

/** The messages of `ruleId` that ESLint gave the case. */
const ruleErrors = (ruleId: string, name: keyof typeof CASES) =>
  messages[name].filter((m) => m.ruleId === ruleId).map((m) => m.message);

const importErrors = (name: keyof typeof CASES) => ruleErrors('@typescript-eslint/no-restricted-imports', name);

describe('workflow import guard', () => {
  it('refuses Node built-ins, config, activities and other domain modules in workflow code, and admits the rest', () => {
    const errors = importErrors('workflowImports');
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

  it('holds the top-level workflow modules to the same rule', () => {
    const errors = importErrors('topLevelWorkflowImports');
    expect(errors.map((m) => /^'([^']+)'/.exec(m)?.[1])).toEqual(['../config', '../domain/shared/secrets']);
  });

  it('keeps workflow-safe domain modules from importing anything else', () => {
    expect(importErrors('workflowSafeImports')).toHaveLength(1);
  });
});

describe('settings guard', () => {
  it('refuses process.env in a service file, however it is reached', () => {
    const errors = ruleErrors('no-restricted-syntax', 'envInService');
    expect(errors).toHaveLength(4);
    expect(errors[0]).toMatch(/config\.ts/);
  });

  it('lets config.ts read the environment', () => {
    expect(ruleErrors('no-restricted-syntax', 'envInConfig')).toEqual([]);
  });
});

describe('typed SQL guard', () => {
  it('refuses a raw db.query call where SQL is typed, and lets the typed helpers through', () => {
    const errors = ruleErrors('no-restricted-syntax', 'untypedQuery');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/services\/shared\/sql\.ts/);
  });
});

describe('import cycle guard', () => {
  it('refuses a value import of a module that imports this one, and lets a type-only import through', () => {
    expect(ruleErrors('import-x/no-cycle', 'importCycle')).toEqual(['Dependency cycle detected']);
  });
});
