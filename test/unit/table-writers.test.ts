// One writer per table (decision 0150): every INSERT INTO, UPDATE and DELETE FROM a table in the
// product code's SQL strings comes from one file, so each kind of change to a table has one name
// and one statement. A second file writing a table fails here: move the statement into the
// table's rows module and call that. EXCEPTIONS are the tables still written from several files.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');
const DIRS = ['api', 'services', 'activities', 'scripts', 'worker'];
/** The test stack's bootstrap and the one-off code rewrites are not product code. */
const SKIPPED = ['scripts/stack.ts', 'scripts/codemods'];

/** Tables still written from more than one file, each with why. */
const EXCEPTIONS: Record<string, string> = {};

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (SKIPPED.some((s) => rel === s || rel.startsWith(`${s}/`))) return [];
    if (statSync(path.join(ROOT, rel)).isDirectory()) return tsFiles(rel);
    return rel.endsWith('.ts') && !rel.endsWith('.d.ts') ? [rel] : [];
  });
}

/** The text of every string and template literal in the source (a template's parts joined by a space). */
function stringTexts(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const texts: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) texts.push(node.text);
    else if (ts.isTemplateExpression(node)) {
      texts.push([node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ${} '));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return texts;
}

/** The tables a source file's SQL strings insert into, update or delete from. */
export function writtenTables(fileName: string, source: string): Set<string> {
  const tables = new Set<string>();
  for (const text of stringTexts(fileName, source)) {
    // SQL keywords are upper case here (prose such as 'Update an agent' is not a write); FOR UPDATE
    // OF locks rows, and ON CONFLICT ... DO UPDATE SET writes the table the INSERT named.
    for (const m of text.matchAll(/(?<!\bFOR\s+)\b(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+([a-z_][a-z0-9_]*)\b/g)) {
      if (m[1] !== 'set') tables.add(m[1]);
    }
  }
  return tables;
}

function writersByTable(): Map<string, string[]> {
  const writers = new Map<string, string[]>();
  for (const file of DIRS.flatMap(tsFiles)) {
    for (const table of writtenTables(file, readFileSync(path.join(ROOT, file), 'utf8'))) {
      writers.set(table, [...(writers.get(table) ?? []), file]);
    }
  }
  return writers;
}

describe('one writer per table', () => {
  it('finds the writes in a SQL string, not in comments or dynamic names', () => {
    const sample = [
      '// update members here, insert into agents there',
      'const a = sql(db, `INSERT INTO members (email) VALUES ($1) ON CONFLICT (email) DO UPDATE SET email = $1`);',
      "const b = sql(db, 'UPDATE webhook_deliveries SET status = $2 WHERE id = $1');",
      'const c = sql(db, `WITH d AS (DELETE FROM notifications WHERE id = ${id} RETURNING id) SELECT * FROM d`);',
      'const d = sql(db, `UPDATE ${table} SET x = 1`);',
      "const e = sql(db, 'SELECT id FROM agents WHERE id = $1 FOR UPDATE OF agents');",
      "const f = { summary: 'Update an agent' };",
    ].join('\n');
    expect([...writtenTables('sample.ts', sample)].sort()).toEqual(['members', 'notifications', 'webhook_deliveries']);
  });

  it('each table is written from one file (or is a listed exception)', () => {
    const several = [...writersByTable()]
      .filter(([table, files]) => files.length > 1 && !(table in EXCEPTIONS))
      .map(([table, files]) => `${table}: ${files.join(', ')}`);
    expect(several).toEqual([]);
  });

  it('lists no exception that is written from one file now', () => {
    const writers = writersByTable();
    const settled = Object.keys(EXCEPTIONS).filter((table) => (writers.get(table)?.length ?? 0) < 2);
    expect(settled).toEqual([]);
  });
});
