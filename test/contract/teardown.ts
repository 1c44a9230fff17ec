// Jest globalTeardown: validates every response the run's API servers answered against the
// OpenAPI document they serve (test/contract/check.ts) and fails the run on any mismatch.
// After a full run (CONTRACT_FULL_RUN=1, set by scripts/test.ts when no test file is named)
// it also fails on operations no test called and on documented statuses no test received,
// except those listed in test/contract/unproducible.ts (no test can produce them) and
// test/contract/uncovered.ts (known gaps, printed); after a subset it only counts them.
// The whole report is written to report.json beside the records.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../config';
import { buildOpenApi } from '../../api/discovery/openapi';
import { allRoutes } from '../../api/routes';
import { CheckResult, checkRecords, readRecords } from './check';
import { UNPRODUCIBLE, UNPRODUCIBLE_STATUSES } from './unproducible';
import { UNCOVERED } from './uncovered';

export interface Coverage {
  /** Operations no recorded response belongs to. */
  unexercised: string[];
  /** `OPERATION STATUS` pairs documented, not received and not listed as unproducible. */
  unseen: string[];
  /** Documented statuses listed as unproducible (with the reason). */
  excused: string[];
  /** Documented statuses no test reaches yet, listed in uncovered.ts: printed, not failed. */
  gaps: string[];
}

export function coverageOf(result: CheckResult): Coverage {
  const coverage: Coverage = { unexercised: [], unseen: [], excused: [], gaps: [] };
  for (const op of result.operations) {
    const seen = result.seen[op.key];
    if (!seen) coverage.unexercised.push(op.key);
    for (const status of Object.keys(op.responses)) {
      if (seen?.[status]) continue;
      const reason = UNPRODUCIBLE[op.key]?.[status] ?? UNPRODUCIBLE_STATUSES[status];
      if (reason) coverage.excused.push(`${op.key} ${status}`);
      else if (UNCOVERED[`${op.key} ${status}`]) coverage.gaps.push(`${op.key} ${status}`);
      else if (seen) coverage.unseen.push(`${op.key} ${status}`);
    }
  }
  return coverage;
}

function groupMismatches(result: CheckResult) {
  const groups = new Map<string, { count: number; first: CheckResult['mismatches'][number] }>();
  for (const m of result.mismatches) {
    const key = `${m.operation} ${m.status}: ${m.problem}`;
    const group = groups.get(key);
    if (group) group.count++;
    else groups.set(key, { count: 1, first: m });
  }
  return [...groups.entries()].map(([key, g]) => ({ key, count: g.count, example: g.first }));
}

export default async function teardown(): Promise<void> {
  const dir = process.env.CONTRACT_RECORD_DIR;
  if (!dir) return;
  const records = readRecords(dir);
  if (!records.length) return;
  const doc = buildOpenApi(loadConfig({ ...process.env, PORT: '0' }), allRoutes) as Record<string, unknown>;
  const result = checkRecords(doc, records);
  const coverage = coverageOf(result);
  const full = process.env.CONTRACT_FULL_RUN === '1';
  const groups = groupMismatches(result);
  const reportPath = path.join(dir, 'report.json');
  writeFileSync(
    reportPath,
    JSON.stringify(
      {
        full_run: full,
        records: result.records,
        checked: result.checked,
        outside_the_document: result.outside,
        mismatches: result.mismatches.length,
        mismatch_groups: groups,
        operations: result.operations.length,
        exercised: result.operations.length - coverage.unexercised.length,
        unexercised: coverage.unexercised,
        unseen_statuses: coverage.unseen,
        excused_statuses: coverage.excused,
        known_gaps: coverage.gaps,
        seen: result.seen,
      },
      null,
      2,
    ),
  );

  const lines = [
    '',
    `[contract] ${result.checked} of ${result.records} responses belong to operations of the OpenAPI document; ` +
      `${result.mismatches.length} do not match it. ` +
      `${result.operations.length - coverage.unexercised.length} of ${result.operations.length} operations exercised.`,
  ];
  for (const g of groups.slice(0, 80))
    lines.push(
      `  ${g.count}x ${g.key}\n      e.g. ${g.example.url} in ${g.example.test ?? '?'} › ${g.example.test_name ?? '?'}`,
    );
  if (groups.length > 80) lines.push(`  ... ${groups.length - 80} more kinds in ${reportPath}`);
  if (full) {
    if (coverage.gaps.length)
      lines.push(
        `[contract] ${coverage.gaps.length} documented statuses no test reaches yet (known gaps, test/contract/uncovered.ts); see ${reportPath}`,
      );
    if (coverage.unexercised.length)
      lines.push(`[contract] operations no test called:`, ...coverage.unexercised.map((k) => `  ${k}`));
    if (coverage.unseen.length)
      lines.push(
        `[contract] documented statuses no test received (add a test, or list the status in test/contract/unproducible.ts with the reason):`,
        ...coverage.unseen.map((k) => `  ${k}`),
      );
  } else if (coverage.unexercised.length || coverage.unseen.length) {
    lines.push(
      `[contract] (a subset ran: ${coverage.unexercised.length} operations not called and ${coverage.unseen.length} documented statuses not received; a full run fails on them; see ${reportPath})`,
    );
  }
  console.log(lines.join('\n'));
  const failed = result.mismatches.length > 0 || (full && (coverage.unexercised.length || coverage.unseen.length) > 0);
  if (failed) {
    const err = new Error(`[contract] the responses do not match the OpenAPI document; see above and ${reportPath}`);
    err.stack = err.message; // Jest prints the stack of a failed globalTeardown: this one says all there is.
    throw err;
  }
}
