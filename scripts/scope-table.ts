// Prints the markdown table of every row of the access table (domain/shared/access.ts): endpoint,
// key kinds, agent scopes and guards. With --write it replaces the table inside the
// `Authentication and keys` section of docs/agents.md, between the scope-table markers.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ENDPOINT_ACCESS } from '../domain/shared/access';
import { renderAccessTable } from '../domain/shared/access-summary';

const START = '<!-- scope-table:start -->';
const END = '<!-- scope-table:end -->';

function main() {
  const table = renderAccessTable(ENDPOINT_ACCESS);
  if (!process.argv.includes('--write')) {
    console.log(table);
    return;
  }
  const readme = path.resolve(__dirname, '..', 'docs', 'agents.md');
  const text = readFileSync(readme, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/agents.md has no ${START} ... ${END} block`);
  writeFileSync(readme, `${text.slice(0, start + START.length)}\n${table}\n${text.slice(end)}`);
  console.log(`docs/agents.md: ${Object.keys(ENDPOINT_ACCESS).length} rows written`);
}

main();
