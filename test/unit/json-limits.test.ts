// The raw-bytes JSON scan that runs before any parse or schema walk: depth, value count,
// NUL characters and the spans of object members, against hostile and random JSON.
import fc from 'fast-check';
import { performance } from 'node:perf_hooks';
import {
  dotPath,
  freeFormPaths,
  inspectJson,
  JSON_BODY_LIMITS,
  MAX_JSON_DEPTH,
  MAX_JSON_VALUES,
  oversizedFreeForm,
  spanAt,
} from '../../domain/shared/json-limits';
import { nulPath } from '../../api/router';

const scan = (text: string, limits = JSON_BODY_LIMITS, wanted: string[][] = []) =>
  inspectJson(Buffer.from(text), limits, wanted);

function depthOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(v).map(depthOf));
}
function countOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 1;
  return 1 + Object.values(v).reduce<number>((n, c) => n + countOf(c), 0);
}

describe('inspectJson', () => {
  it(`accepts ${MAX_JSON_DEPTH} levels and refuses ${MAX_JSON_DEPTH + 1}, naming the field`, () => {
    const nest = (levels: number) => `{"metadata":{"a":${'['.repeat(levels - 2)}0${']'.repeat(levels - 2)}}}`;
    expect(scan(nest(MAX_JSON_DEPTH)).problem).toBeNull();
    const deep = scan(nest(MAX_JSON_DEPTH + 1)).problem!;
    expect(deep).toMatchObject({
      kind: 'depth',
      message: `nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`,
    });
    expect(deep.path.slice(0, 2)).toEqual(['metadata', 'a']);
    expect(deep.path).toHaveLength(MAX_JSON_DEPTH);
  });

  it('refuses 7,000,000 levels of nesting in one pass and keeps reading the members after it', () => {
    const text = `{"metadata":{"a":${'['.repeat(7_000_000)}${']'.repeat(7_000_000)}},"id":42}`;
    const started = performance.now();
    const r = inspectJson(Buffer.from(text), JSON_BODY_LIMITS, [], [['id']]);
    console.log(
      `scan of a 7,000,000-deep array (${(text.length / 1e6).toFixed(1)} MB): ${(performance.now() - started).toFixed(0)} ms`,
    );
    expect(r.problem).toMatchObject({ kind: 'depth', path: expect.arrayContaining(['metadata', 'a']) });
    const id = spanAt(r, ['id'])!;
    expect(text.slice(id.start, id.end)).toBe('42');
  });

  it('stops after a problem once every kept member was seen', () => {
    const text = `{"id":42,"method":"tools/call","params":{"arguments":{"a":${'['.repeat(1000)}${']'.repeat(1000)}}}}`;
    const r = inspectJson(Buffer.from(text), JSON_BODY_LIMITS, [], [['id'], ['method']]);
    expect(r.problem).toMatchObject({
      kind: 'depth',
      path: ['params', 'arguments', 'a', ...Array(MAX_JSON_DEPTH - 3).fill(0)],
    });
    expect(r.spans.map((s) => s.path)).toEqual([['id'], ['method']]);
    // The root, id, method, params, arguments, a and the arrays below it up to the one too deep.
    expect(r.values).toBe(MAX_JSON_DEPTH + 3);
  });

  it(`refuses more than ${MAX_JSON_VALUES} values at the member that holds them`, () => {
    const text = `{"name":"x","metadata":{"a":[${Array(MAX_JSON_VALUES).fill('0').join(',')}]}}`;
    expect(scan(text).problem).toMatchObject({ kind: 'values', path: ['metadata', 'a', MAX_JSON_VALUES - 4] });
    expect(
      scan(
        `[${Array(MAX_JSON_VALUES - 1)
          .fill('0')
          .join(',')}]`,
      ).problem,
    ).toBeNull();
  });

  it('finds NUL in values and keys with their paths, and not in an escaped backslash', () => {
    expect(scan('{"a":[1,"x\\u0000y"]}').problem).toMatchObject({ kind: 'nul', path: ['a', 1] });
    expect(scan('{"a":{"k\\u0000":1}}').problem).toMatchObject({ kind: 'nul', path: ['a', 'k\u0000'] });
    expect(scan('{"a":"\\\\u0000","b":"\\\\\\u0000"}').problem).toMatchObject({ kind: 'nul', path: ['b'] });
    expect(scan('{"a":"\\\\u0000"}').problem).toBeNull();
  });

  it('skips brackets, quotes and commas inside strings', () => {
    const text = '{"a":"[[[{\\"}]],,","b":{"c":"\\\\"},"d":[1,2]}';
    const r = scan(text, JSON_BODY_LIMITS, [['b'], ['d']]);
    expect(r.problem).toBeNull();
    expect(text.slice(spanAt(r, ['b'])!.start, spanAt(r, ['b'])!.end)).toBe('{"c":"\\\\"}');
    expect(text.slice(spanAt(r, ['d'])!.start, spanAt(r, ['d'])!.end)).toBe('[1,2]');
    expect(r.values).toBe(7);
  });

  it('measures free-form members as sent, every repeated key included', () => {
    const big = JSON.stringify({ a: 'x'.repeat(16 * 1024) });
    const rest = (text: string) => oversizedFreeForm(scan(text, JSON_BODY_LIMITS, freeFormPaths()));
    expect(rest(`{"metadata":${big},"name":"n"}`)).toMatchObject({ kind: 'size', path: ['metadata'] });
    expect(rest(`{"metadata":${big},"metadata":{}}`)).toMatchObject({ path: ['metadata'] });
    expect(rest(`{"met\\u0061data":${big}}`)).toMatchObject({ path: ['metadata'] });
    expect(rest(`{"metadata":{"a":1},"notes":${big}}`)).toBeNull();
    const mcp = scan(
      `{"params":{"arguments":{"metadata":${big}}}}`,
      JSON_BODY_LIMITS,
      freeFormPaths(['params', 'arguments']),
    );
    expect(oversizedFreeForm(mcp, ['params', 'arguments'])).toMatchObject({
      path: ['params', 'arguments', 'metadata'],
    });
    expect(dotPath(['metadata', 'a', 0])).toBe('metadata.a.0');
  });

  it('agrees with a recursive walk on random JSON (depth, value count, NUL path, member spans)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify(value);
        const members = value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : [];
        const r = scan(
          text,
          { maxDepth: 64, maxValues: 1e9 },
          members.map((k) => [k]),
        );
        expect(r.values).toBe(countOf(value));
        expect(scan(text, { maxDepth: depthOf(value), maxValues: 1e9 }).problem?.kind === 'depth').toBe(false);
        if (depthOf(value) > 0)
          expect(scan(text, { maxDepth: depthOf(value) - 1, maxValues: 1e9 }).problem?.kind).toBe('depth');
        const nul = nulPath(value);
        expect(r.problem ? dotPath(r.problem.path) : null).toBe(nul);
        if (members.length) {
          for (const [k, v] of Object.entries(value as object)) {
            const span = spanAt(r, [k])!;
            expect(text.slice(span.start, span.end)).toBe(JSON.stringify(v));
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
