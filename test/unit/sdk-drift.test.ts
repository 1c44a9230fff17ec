// The committed SDKs are what `npm run sdk:generate` makes from the document the app serves:
// regenerates both into a temporary directory and fails on any file that differs, is missing
// or is extra. On a drift, run `npm run sdk:generate` and commit the result.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.join(__dirname, '..', '..');
/** What the generator writes (the hand-written files beside them are not compared). */
const GENERATED = [
  'sdk/openapi.json',
  'sdk/go/openapi-3.0.json',
  'sdk/go/oapi-codegen.yaml',
  'sdk/go/client.gen.go',
  'sdk/go/idempotent.gen.go',
  'sdk/typescript/src/generated',
];

function files(root: string, rel: string): string[] {
  const full = path.join(root, rel);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [rel];
  return readdirSync(full).flatMap((name) => files(root, path.join(rel, name)));
}

jest.setTimeout(600_000);

it('regenerating the SDKs from the served OpenAPI document changes nothing', async () => {
  const out = mkdtempSync(path.join(tmpdir(), 'sdk-drift-'));
  await promisify(execFile)(
    path.join(ROOT, 'node_modules', '.bin', 'tsx'),
    [path.join(ROOT, 'scripts', 'sdk-generate.ts'), '--out', out],
    { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
  );
  const committed = GENERATED.flatMap((rel) => files(ROOT, rel)).sort();
  const regenerated = GENERATED.flatMap((rel) => files(out, rel)).sort();
  expect(regenerated).toEqual(committed);
  const differing = committed.filter(
    (rel) => !readFileSync(path.join(ROOT, rel)).equals(readFileSync(path.join(out, rel))),
  );
  expect(differing).toEqual([]);
  expect(committed).toContain('sdk/go/client.gen.go');
  expect(committed).toContain('sdk/typescript/src/generated/sdk.gen.ts');
  // What oapi-codegen reads is OpenAPI 3.0 (the script refuses to write one that does not validate).
  expect(JSON.parse(readFileSync(path.join(out, 'sdk/go/openapi-3.0.json'), 'utf8')).openapi).toBe('3.0.3');
});
