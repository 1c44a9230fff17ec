// Coded errors always carry {code, retryable, suggested_action}: the types refuse a code
// without the other two, the constructor refuses one at run time, every helper renders
// all three, and codedError is the only place in the code base that gives an error a code.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ApiError, codedError, errors } from '../../domain/shared/errors';

const ROOT = path.join(__dirname, '..', '..');
const SOURCE_DIRS = ['api', 'services', 'domain', 'activities', 'workflows', 'worker', 'scripts'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

function expectCoded(body: Record<string, unknown>): void {
  expect(typeof body.code === 'string' || typeof (body.error as { code?: unknown })?.code === 'string').toBe(true);
  expect(typeof body.retryable).toBe('boolean');
  expect(typeof body.suggested_action).toBe('string');
  expect((body.suggested_action as string).length).toBeGreaterThan(0);
}

describe('coded errors', () => {
  it('cannot be built without retryable and suggestedAction', () => {
    // @ts-expect-error a code needs retryable and suggestedAction
    expect(() => new ApiError(409, 'Conflict', { code: 'SOME_CONFLICT' })).toThrow(
      /needs retryable and suggestedAction/,
    );
    // @ts-expect-error a code needs suggestedAction
    expect(() => new ApiError(409, 'Conflict', { code: 'SOME_CONFLICT', retryable: false })).toThrow(
      /needs retryable and suggestedAction/,
    );
    // @ts-expect-error the coded helpers take suggestedAction
    expect(() => errors.conflict('SOME_CONFLICT', 'Conflict', {})).toThrow(/needs retryable and suggestedAction/);
  });

  it('renders code, retryable and suggested_action from every coded helper, nested shape included', () => {
    const bodies = [
      errors.notFound('Thing'),
      errors.badRequest('BAD', 'Bad', { suggestedAction: 'Fix it.' }),
      errors.conflict('TAKEN', 'Taken', { suggestedAction: 'Use another.' }),
      errors.unprocessable('TOO_MUCH', 'Too much', { suggestedAction: 'Use less.' }),
      errors.unavailable('DOWN', 'Down'),
      codedError(409, 'agent_name_taken', 'Taken', {
        nested: { type: 'invalid_request' },
        suggestedAction: 'Choose another name.',
      }),
    ].map((e) => e.toBody());
    for (const body of bodies) expectCoded(body);
    expect(bodies.map((b) => b.retryable)).toEqual([false, false, false, false, true, false]);
  });

  it('gets its code only from codedError (no `new ApiError` with a code anywhere else)', () => {
    const offenders: string[] = [];
    const files = SOURCE_DIRS.flatMap((d) => sourceFiles(path.join(ROOT, d)));
    expect(files.length).toBeGreaterThan(100);
    for (const file of files) {
      if (file.endsWith(path.join('domain', 'shared', 'errors.ts'))) continue;
      const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
      const visit = (node: ts.Node): void => {
        if (ts.isNewExpression(node) && node.expression.getText(source) === 'ApiError') {
          const options = node.arguments?.[2];
          const literalCode =
            options &&
            ts.isObjectLiteralExpression(options) &&
            options.properties.some((p) => p.name?.getText(source) === 'code');
          if (literalCode)
            offenders.push(
              `${path.relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`,
            );
        }
        ts.forEachChild(node, visit);
      };
      visit(source);
    }
    expect(offenders).toEqual([]);
  });
});
