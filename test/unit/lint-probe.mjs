// Lints several snippets, each as if it were a given file of the project, in one ESLint
// instance. The guards under test read syntax and import paths only, so the probe lints
// without type information: no TypeScript program is built (that took most of a minute),
// and the type-aware rules, which need one, are off here.
// Reads [{file, code}] as JSON on stdin; writes [[{ruleId, message}]] as JSON on stdout.
// A separate process because the ESLint config is an ES module, which Jest's module sandbox
// cannot load.
import { ESLint } from 'eslint';
import { text } from 'node:stream/consumers';

const cases = JSON.parse(await text(process.stdin));
const eslint = new ESLint({
  cwd: process.cwd(),
  overrideConfig: {
    languageOptions: { parserOptions: { projectService: false, project: false } },
    rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/no-misused-promises': 'off' },
  },
});
const results = [];
for (const { file, code } of cases) {
  const [result] = await eslint.lintText(code, { filePath: file });
  results.push(result.messages.map(({ ruleId, message }) => ({ ruleId, message })));
}
process.stdout.write(JSON.stringify(results));
