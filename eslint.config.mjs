// `npm run lint` (also run by `npm test`): what the type-checker cannot hold the code to.
import tseslint from 'typescript-eslint';

/** Settings come from the environment in config.ts only; everything else reads them from Deps (deps.config) or its caller. */
const PROCESS_ENV_MESSAGE =
  'Read settings in config.ts (loadConfig) and take them from deps.config; process.env is read nowhere else.';

/** What workflow code may import besides its own folder: the SDK's workflow API and the pure rules of domain/workflow-safe/. */
const WORKFLOW_IMPORT_MESSAGE =
  'Workflow code may import only @temporalio/workflow, @temporalio/common, workflows/** and domain/workflow-safe/; reach anything else through an activity.';

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
    // The environment is read in one place: config.ts. The CLI and test runners (scripts/),
    // the benches and the tests set up processes and their environments, so they may read it.
    files: ['**/*.ts'],
    ignores: ['config.ts', 'scripts/**', 'bench/**', 'test/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[object.name='process'][property.name='env']", message: PROCESS_ENV_MESSAGE },
        { selector: "MemberExpression[object.name='process'][property.value='env']", message: PROCESS_ENV_MESSAGE },
        {
          selector: "VariableDeclarator[init.name='process'] > ObjectPattern > Property[key.name='env']",
          message: PROCESS_ENV_MESSAGE,
        },
        {
          selector: "ImportDeclaration[source.value=/^(node:)?process$/] > ImportSpecifier[imported.name='env']",
          message: PROCESS_ENV_MESSAGE,
        },
      ],
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
    // API, other workflow modules (contracts, shared helpers) and domain/workflow-safe/;
    // activities only as types (for proxyActivities). Two depths, so that `../` cannot leave workflows/.
    files: ['workflows/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex:
                '^(?!(@temporalio/(workflow|common)|\\./[\\w-]+(/[\\w.-]+)?|\\.\\./domain/workflow-safe/[\\w-]+)$)',
              allowTypeImports: true,
              message: WORKFLOW_IMPORT_MESSAGE,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['workflows/*/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex:
                '^(?!(@temporalio/(workflow|common)|\\./[\\w.-]+|\\.\\./[\\w-]+(/[\\w.-]+)?|\\.\\./\\.\\./domain/workflow-safe/[\\w-]+)$)',
              allowTypeImports: true,
              message: WORKFLOW_IMPORT_MESSAGE,
            },
          ],
        },
      ],
    },
  },
  {
    // The workflow-safe rules are pure: no Node built-ins, no packages, nothing outside their folder.
    files: ['domain/workflow-safe/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\./[\\w-]+$)',
              allowTypeImports: true,
              message:
                'A workflow-safe domain module may import only other workflow-safe modules (types from anywhere in domain/).',
            },
          ],
        },
      ],
    },
  },
);
