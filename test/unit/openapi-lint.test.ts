// The lint of the OpenAPI document: Spectral with the ruleset test/contract/openapi-ruleset.yaml
// (its recommended OpenAPI rules, plus unique camelCase operationIds, summaries, tags, named
// components instead of repeated inline schemas, and valid examples) over the document the
// API serves. Spectral runs as its own process, as it would in CI or an editor.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../config';
import { buildOpenApi } from '../../api/discovery/openapi';
import { allRoutes } from '../../api/routes';

const ROOT = path.join(__dirname, '..', '..');

interface SpectralResult {
  code: string;
  message: string;
  path: Array<string | number>;
  severity: number;
}

async function lint(doc: unknown): Promise<SpectralResult[]> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'openapi-lint-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(doc, null, 2));
  const bin = path.join(ROOT, 'node_modules', '.bin', 'spectral');
  const args = ['lint', '--ruleset', path.join(ROOT, 'test', 'contract', 'openapi-ruleset.yaml')];
  args.push('--format', 'json', '--quiet', '--fail-severity', 'hint', file);
  try {
    const { stdout } = await promisify(execFile)(bin, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    return stdout.trim() ? (JSON.parse(stdout) as SpectralResult[]) : [];
  } catch (err) {
    // Spectral exits 1 when it reports anything: its report is still on stdout.
    const stdout = (err as { stdout?: string }).stdout ?? '';
    if (!stdout.trim().startsWith('[')) throw err;
    return JSON.parse(stdout) as SpectralResult[];
  }
}

describe('the OpenAPI document passes its lint', () => {
  it('has no Spectral finding at any severity', async () => {
    const doc = buildOpenApi(loadConfig({ ...process.env, PORT: '0' }), allRoutes);
    const results = await lint(doc);
    expect(results.map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`)).toEqual([]);
  }, 120_000);

  it('catches what the ruleset forbids', async () => {
    const doc = buildOpenApi(loadConfig({ ...process.env, PORT: '0' }), allRoutes) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
    };
    const [first, second] = Object.values(doc.paths);
    const op = Object.values(first)[0] as Record<string, unknown>;
    op.operationId = 'Not_Camel_Case';
    delete op.summary;
    const inline = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' }, c: {} } };
    for (const item of [first, second]) {
      const any = Object.values(item)[0] as { responses: Record<string, unknown> };
      any.responses['299'] = { description: 'inline', content: { 'application/json': { schema: inline } } };
    }
    const codes = new Set((await lint(doc)).map((r) => r.code));
    for (const code of ['operation-operationId-camel-case', 'operation-summary', 'no-repeated-inline-schemas'])
      expect({ code, reported: codes.has(code) }).toEqual({ code, reported: true });
  }, 120_000);
});
