// Rewrites TypeORM raw `.query(...)` calls into the typed helpers of services/shared/sql.ts,
// where the row type is already written next to the call:
//   const x: T[] = await db.query(sql, p)      -> const x = await sqlRows<T>(db, sql, p)
//   const [x]: T[] = await db.query(sql, p)    -> const [x] = await sqlRows<T>(db, sql, p)
//   (await db.query(sql, p)) as T[]            -> (await sqlRows<T>(db, sql, p))
//   await db.query<T[]>(sql, p)                -> await sqlRows<T>(db, sql, p)
//   await db.query(sql, p);  (result unused)   -> await sqlRun(db, sql, p);
//   return db.query(sql, p)  in a function declared to return Promise<T[]>  -> return sqlRows<T>(db, sql, p)
// and prints every other call (file:line) for a hand-written row type. Re-runnable: a file
// already converted has no such calls left. A call counts when the checker resolves it to
// TypeORM's query (DataSource, EntityManager, QueryRunner or a Pick of one).
//
//   npx tsx scripts/codemods/typed-sql.ts [--dry-run] <dir or file>... [--exclude <path prefix>]...
import path from 'node:path';
import { readFileSync, writeFileSync } from 'node:fs';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '..', '..');
const HELPERS = path.join(ROOT, 'services', 'shared', 'sql.ts');

function parseArgs(argv: string[]) {
  const include: string[] = [];
  const exclude: string[] = [];
  let dryRun = false;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--dry-run') dryRun = true;
    else if (argv[i] === '--exclude') exclude.push(path.resolve(ROOT, argv[++i]));
    else include.push(path.resolve(ROOT, argv[i]));
  }
  return { include, exclude, dryRun };
}

const under = (file: string, prefix: string) => file === prefix || file.startsWith(prefix + path.sep);

interface Edit {
  start: number;
  end: number;
  text: string;
}

/** The `.query(...)` call under `await`/parentheses, if `node` is one. */
function awaitedQuery(node: ts.Expression): ts.CallExpression | undefined {
  let n: ts.Expression = node;
  while (ts.isParenthesizedExpression(n)) n = n.expression;
  if (!ts.isAwaitExpression(n)) return undefined;
  let call: ts.Expression = n.expression;
  while (ts.isParenthesizedExpression(call)) call = call.expression;
  return ts.isCallExpression(call) && isQueryCallee(call) ? call : undefined;
}

function isQueryCallee(
  call: ts.CallExpression,
): call is ts.CallExpression & { expression: ts.PropertyAccessExpression } {
  return ts.isPropertyAccessExpression(call.expression) && call.expression.name.text === 'query';
}

/** T of `T[]` or `Array<T>` (or `readonly T[]`), as written. */
function elementType(type: ts.TypeNode, sf: ts.SourceFile): string | undefined {
  if (ts.isTypeOperatorNode(type) && type.operator === ts.SyntaxKind.ReadonlyKeyword) type = type.type;
  if (ts.isArrayTypeNode(type)) {
    const el = type.elementType;
    const text = el.getText(sf);
    return ts.isParenthesizedTypeNode(el) ? el.type.getText(sf) : text;
  }
  if (ts.isTypeReferenceNode(type) && type.typeName.getText(sf) === 'Array' && type.typeArguments?.length === 1)
    return type.typeArguments[0].getText(sf);
  return undefined;
}

function main() {
  const { include, exclude, dryRun } = parseArgs(process.argv.slice(2));
  if (!include.length) throw new Error('name the directories or files to convert');
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  const program = ts.createProgram(parsed.fileNames, parsed.options);
  const checker = program.getTypeChecker();

  /** A call the checker resolves to TypeORM's query. */
  const isTypeormQuery = (call: ts.CallExpression) => {
    const decl = checker.getResolvedSignature(call)?.getDeclaration();
    return !!decl && decl.getSourceFile().fileName.includes(`${path.sep}node_modules${path.sep}typeorm${path.sep}`);
  };

  const left: string[] = [];
  let converted = 0;
  let files = 0;
  for (const sf of program.getSourceFiles()) {
    const file = path.resolve(sf.fileName);
    if (sf.isDeclarationFile || file === HELPERS) continue;
    if (!include.some((p) => under(file, p)) || exclude.some((p) => under(file, p))) continue;

    const edits: Edit[] = [];
    const used = new Set<string>();
    const handled = new Set<ts.CallExpression>();
    const text = (n: ts.Node) => n.getText(sf);
    const helperCall = (
      helper: string,
      call: ts.CallExpression & { expression: ts.PropertyAccessExpression },
      row?: string,
    ) => `${helper}${row ? `<${row}>` : ''}(${[call.expression.expression, ...call.arguments].map(text).join(', ')})`;
    const replaceCall = (
      call: ts.CallExpression & { expression: ts.PropertyAccessExpression },
      helper: string,
      row?: string,
    ) => {
      edits.push({ start: call.getStart(sf), end: call.getEnd(), text: helperCall(helper, call, row) });
      used.add(helper);
      handled.add(call);
    };

    /** T of the enclosing function's declared Promise<T[]>. */
    const promisedRow = (ret: ts.ReturnStatement) => {
      let fn: ts.Node = ret.parent;
      while (fn && !ts.isFunctionLike(fn)) fn = fn.parent;
      const type = fn && ts.isFunctionLike(fn) ? fn.type : undefined;
      if (!type || !ts.isTypeReferenceNode(type) || type.typeName.getText(sf) !== 'Promise') return undefined;
      const inner = type.typeArguments?.[0];
      return inner ? elementType(inner, sf) : undefined;
    };

    const visit = (node: ts.Node) => {
      // const x: T[] = await db.query(...)  /  const [x]: T[] = await db.query(...)
      if (ts.isVariableDeclaration(node) && node.type && node.initializer) {
        const call = awaitedQuery(node.initializer);
        const row = elementType(node.type, sf);
        if (call && row && isQueryCallee(call) && !call.typeArguments && isTypeormQuery(call)) {
          edits.push({ start: node.name.getEnd(), end: node.type.getEnd(), text: '' });
          replaceCall(call, 'sqlRows', row);
        }
      }
      // (await db.query(...)) as T[]
      if (ts.isAsExpression(node)) {
        const call = awaitedQuery(node.expression);
        const row = elementType(node.type, sf);
        if (call && row && isQueryCallee(call) && !call.typeArguments && isTypeormQuery(call)) {
          edits.push({ start: node.expression.getEnd(), end: node.getEnd(), text: '' });
          replaceCall(call, 'sqlRows', row);
        }
      }
      if (ts.isCallExpression(node) && isQueryCallee(node) && !handled.has(node) && isTypeormQuery(node)) {
        const parent = node.parent;
        const row = node.typeArguments?.length === 1 ? elementType(node.typeArguments[0], sf) : undefined;
        // await db.query<T[]>(...)
        if (row) replaceCall(node, 'sqlRows', row);
        // return db.query(...)  in a function declared to return Promise<T[]>
        else if (ts.isReturnStatement(parent) && promisedRow(parent)) replaceCall(node, 'sqlRows', promisedRow(parent));
        // await db.query(...);  with the result unused
        else if (ts.isAwaitExpression(parent) && ts.isExpressionStatement(parent.parent)) replaceCall(node, 'sqlRun');
        else if (!handled.has(node)) {
          const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
          left.push(`${path.relative(ROOT, file)}:${line + 1}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
    if (!edits.length) continue;

    // A local of the same name as a helper would shadow the import: leave such a file to a hand.
    const clash = [...used].find((name) => new RegExp(`\\b(const|let|var|function)\\s+${name}\\b`).test(sf.text));
    if (clash) {
      left.push(`${path.relative(ROOT, file)}: declares ${clash}; not converted`);
      continue;
    }
    let out = sf.text;
    for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
    out = addImport(out, file, [...used]);
    converted += edits.filter((e) => e.text).length;
    files++;
    if (!dryRun) writeFileSync(file, out);
  }
  for (const site of left) console.log(site);
  console.error(
    `typed-sql: ${converted} calls converted in ${files} files${dryRun ? ' (dry run)' : ''}; ${left.length} left to type by hand`,
  );
}

/** Adds the helpers to the file's import of services/shared/sql (or a new import after the last one). */
function addImport(source: string, file: string, names: string[]): string {
  let spec = path.relative(path.dirname(file), HELPERS).replace(/\.ts$/, '').split(path.sep).join('/');
  if (!spec.startsWith('.')) spec = `./${spec}`;
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const imports = sf.statements.filter(ts.isImportDeclaration);
  const existing = imports.find(
    (i) => (i.moduleSpecifier as ts.StringLiteral).text === spec && !i.importClause?.isTypeOnly,
  );
  const bindings = existing?.importClause?.namedBindings;
  if (existing && bindings && ts.isNamedImports(bindings)) {
    const all = [...new Set([...bindings.elements.map((e) => e.getText(sf)), ...names])].sort();
    return source.slice(0, bindings.getStart(sf)) + `{ ${all.join(', ')} }` + source.slice(bindings.getEnd());
  }
  const line = `import { ${names.sort().join(', ')} } from '${spec}';\n`;
  const last = imports[imports.length - 1];
  if (!last) return line + source;
  const at = last.getEnd() + 1;
  return source.slice(0, at) + line + source.slice(at);
}

main();
