// Numbers in requests, for every route (path, query, body) and every MCP tool input:
// every integer is bounded to what its column (a Postgres integer) and the spec allow, so
// no number can reach the database as a 500.
import { RequestField, requestFields, takesNumber } from '../helpers/request-schemas';

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
    expect(numeric.some((f) => f.where.startsWith('POST /v1/agents/:id/credentials body') && f.path === 'max_daily_pieces')).toBe(true);
  });

  it('bounds every integer to its column and to the spec', () => {
    const problems: string[] = [];
    for (const f of numeric) {
      const label = `${f.where} ${f.path}`;
      if (accepts(f, INT4_MAX + 1) || accepts(f, INT4_MIN - 1)) problems.push(`${label}: takes numbers a Postgres integer cannot hold`);
      for (const [where, path, max] of SPEC_MAXIMA) {
        if (where.test(f.where) && path === f.path && accepts(f, max + 1)) problems.push(`${label}: takes ${max + 1}; the spec allows at most ${max}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
