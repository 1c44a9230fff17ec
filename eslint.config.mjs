// `npm run lint` (also run by `npm test`): what the type-checker cannot hold the code to.
import tseslint from 'typescript-eslint';

/**
 * Domain modules that workflow code may import: pure rules with no Node built-ins and no
 * packages, so the workflow bundle stays deterministic. Anything else a workflow needs goes
 * through an activity.
 */
const WORKFLOW_SAFE_DOMAIN = ['handling', 'mail-rules', 'mail-runs', 'webhook-retry', 'us-states', 'visible-text'];

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', '.tools/**', '**/*.js', '**/*.mjs'] },
  {
    files: ['**/*.ts'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // Tests and benches read JSON answers whose shape is what they assert or count; typing
    // every body would only restate the assertions.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: it may import the SDK's workflow
    // API, its own contracts and helpers, and the workflow-safe domain rules; activities only
    // as types (for proxyActivities).
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{
          regex: `^(?!(@temporalio/(workflow|common)|\\./[\\w-]+|\\./contracts/[\\w-]+|(\\.\\./)+domain/(${WORKFLOW_SAFE_DOMAIN.join('|')}))$)`,
          allowTypeImports: true,
          message: 'Workflow code may import only @temporalio/workflow, @temporalio/common, workflows/* and the workflow-safe domain rules (eslint.config.mjs); reach anything else through an activity.',
        }],
      }],
    },
  },
  {
    files: WORKFLOW_SAFE_DOMAIN.map((m) => `domain/${m}.ts`),
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', {
        patterns: [{ regex: `^(?!\\./(${WORKFLOW_SAFE_DOMAIN.join('|')})$)`, allowTypeImports: true, message: 'A workflow-safe domain module may import only other workflow-safe domain modules (types from anywhere in domain/).' }],
      }],
    },
  },
);
