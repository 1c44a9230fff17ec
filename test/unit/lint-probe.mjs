// Lints several snippets, each as if it were a given file of the project, in one ESLint
// instance: the type-aware parser loads the project once instead of once per snippet.
// Reads [{file, code}] as JSON on stdin; writes [[{ruleId, message}]] as JSON on stdout.
// A separate process because the ESLint config is an ES module, which Jest's module sandbox
// cannot load.
import { ESLint } from 'eslint';
import { text } from 'node:stream/consumers';

const cases = JSON.parse(await text(process.stdin));
const eslint = new ESLint({ cwd: process.cwd() });
const results = [];
for (const { file, code } of cases) {
  const [result] = await eslint.lintText(code, { filePath: file });
  results.push(result.messages.map(({ ruleId, message }) => ({ ruleId, message })));
}
process.stdout.write(JSON.stringify(results));
