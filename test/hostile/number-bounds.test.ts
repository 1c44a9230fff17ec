// Numbers in requests, for every route (path, query, body) and every MCP tool input:
// what the OpenAPI document and tools/list advertise is what zod accepts (the advertised
// minimum and maximum are accepted, one step beyond is refused, and an unbounded number is
// unbounded in zod too), and every integer is bounded to what its column (a Postgres
// integer unless listed) and the spec allow, so no number can reach the database as a 500.
import { nonNull, RequestField, requestFields, takesNumber } from '../helpers/request-schemas';

const INT4_MAX = 2_147_483_647;
const INT4_MIN = -2_147_483_648;

const fields = requestFields();
const numeric = fields.filter((f) => takesNumber(f.zod));
const accepts = (f: RequestField, value: number) => f.zod.safeParse(value).success;

/** Limits the spec sets below a column's range: [where (substring), field path, largest value]. */
const SPEC_MAXIMA: Array<[RegExp, string, number]> = [
  [/./, 'limit', 100],
  [/agent-inbox|agent_inbox|\/v1\/inbound-items|inbound_item|inbound_pages/, 'limit', 50],
  [/agent-inbox|agent_inbox|\/v1\/inbound-items|inbound_item|inbound_pages/, 'offset', 10000],
  [/test\/mail|create_test_outbound_mail/, 'page_count', 100],
  [/batch-mail/, 'quantity', 10000],
  [/batch-mail/, 'page_count', 200],
  [/batch/, 'ranges.items.from', 10000],
  [/batch/, 'ranges.items.to', 10000],
  [/batch/, 'sequences.items', 10000],
];

describe('numbers in requests', () => {
  it('finds the numeric fields of every route and MCP tool', () => {
    expect(numeric.length).toBeGreaterThan(40);
    expect(numeric.some((f) => f.where === 'MCP send_outbound_mail' && f.path === 'page_count')).toBe(true);
    expect(numeric.some((f) => f.where.startsWith('POST /v1/mail body') && f.path === 'page_count')).toBe(true);
    expect(
      numeric.some((f) => f.where.startsWith('POST /v1/agents/:id/credentials body') && f.path === 'max_daily_pieces'),
    ).toBe(true);
    expect(numeric.some((f) => f.where === 'POST /v1/mail header' && f.path === 'X-Max-Cost-Cents')).toBe(true);
  });

  it('advertises the bounds zod enforces, through pipes and coercions', () => {
    const problems: string[] = [];
    for (const f of numeric) {
      const json = nonNull(f.json);
      const label = `${f.where} ${f.path}: advertised ${JSON.stringify({ type: json.type, minimum: json.minimum, maximum: json.maximum, exclusiveMinimum: json.exclusiveMinimum, exclusiveMaximum: json.exclusiveMaximum })}`;
      if (json.type !== 'integer' && json.type !== 'number') {
        problems.push(`${label}; zod takes a number, the document does not say so`);
        continue;
      }
      const step = json.type === 'integer' ? 1 : 0.001;
      const huge = json.type === 'integer' ? Number.MAX_SAFE_INTEGER : 1e300;
      if (typeof json.maximum === 'number') {
        if (!accepts(f, json.maximum) || accepts(f, json.maximum + step))
          problems.push(`${label}; zod does not take exactly up to ${json.maximum}`);
      } else if (typeof json.exclusiveMaximum === 'number') {
        if (accepts(f, json.exclusiveMaximum) || !accepts(f, json.exclusiveMaximum - step))
          problems.push(`${label}; zod does not take exactly below ${json.exclusiveMaximum}`);
      } else if (!accepts(f, huge)) {
        problems.push(`${label}; no maximum is advertised but zod refuses ${huge}`);
      }
      if (typeof json.minimum === 'number') {
        if (!accepts(f, json.minimum) || accepts(f, json.minimum - step))
          problems.push(`${label}; zod does not take exactly down to ${json.minimum}`);
      } else if (typeof json.exclusiveMinimum === 'number') {
        if (accepts(f, json.exclusiveMinimum) || !accepts(f, json.exclusiveMinimum + step))
          problems.push(`${label}; zod does not take exactly above ${json.exclusiveMinimum}`);
      } else if (!accepts(f, -huge)) {
        problems.push(`${label}; no minimum is advertised but zod refuses ${-huge}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('bounds every integer to its column and to the spec', () => {
    const problems: string[] = [];
    for (const f of numeric) {
      const label = `${f.where} ${f.path}`;
      if (accepts(f, INT4_MAX + 1) || accepts(f, INT4_MIN - 1))
        problems.push(`${label}: takes numbers a Postgres integer cannot hold`);
      for (const [where, path, max] of SPEC_MAXIMA) {
        if (where.test(f.where) && path === f.path && accepts(f, max + 1))
          problems.push(`${label}: takes ${max + 1}; the spec allows at most ${max}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
