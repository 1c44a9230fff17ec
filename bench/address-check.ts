// The offline address check's costs, outside `npm run` bench's stack: the first check in a
// fresh process (which reads the ZIP directory), then checks per second over a mix of
// clean, messy and wrong addresses. Run alone with `npx tsx bench/address-check.ts`;
// runAddressCheckBench() returns the same figures as BenchMetric rows for bench/run.ts.
import type { BenchMetric } from './run';
import { checkUsAddress, type AddressCheckInput } from '../domain/outbound-mail/address-check';
import { isZipDirectoryLoaded } from '../domain/outbound-mail/zip-directory';

const MIX: AddressCheckInput[] = [
  { line1: '1600 Pennsylvania Avenue NW', city: 'Washington', state: 'DC', zip: '20500' },
  { line1: '350 fifth avenue', line2: 'suite 3304', city: 'new york', state: 'ny', zip: '10118-3299' },
  { line1: 'P.O. Box 12', city: 'Boston', state: 'Massachusetts', zip: '2116' },
  { line1: '233 S. Wacker Drive, Floor 103', city: 'Chicago', state: 'IL', zip: '60606' },
  { line1: '700 Boylston St', city: 'Boston', state: 'MA', zip: '02139' },
  { line1: 'Unit 2050 Box 4190', city: 'APO', state: 'AE', zip: '09021' },
  { line1: '63 Calle Fortaleza', city: 'San Juan', state: 'PR', zip: '00901', country: 'PR' },
  { line1: '1211 Avenue of the Americas', city: 'New York', state: 'NY', zip: '10036' },
];

export async function runAddressCheckBench(opts: { seconds?: number } = {}): Promise<BenchMetric[]> {
  const bench = 'address-check';
  const metrics: BenchMetric[] = [];
  if (!isZipDirectoryLoaded()) {
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const t0 = performance.now();
    checkUsAddress(MIX[0]);
    const loadMs = performance.now() - t0;
    global.gc?.();
    metrics.push(
      { bench, metric: 'first check (loads the ZIP directory)', value: Math.round(loadMs), unit: 'ms' },
      {
        bench,
        metric: 'RSS added by the ZIP directory',
        value: Math.round((process.memoryUsage().rss - rssBefore) / 1e6),
        unit: 'MB',
      },
    );
  }
  // The city index behind the "ZIPs include" hints is built on the first mismatch.
  checkUsAddress(MIX[4]);
  const until = performance.now() + (opts.seconds ?? 2) * 1000;
  let checks = 0;
  const t0 = performance.now();
  while (performance.now() < until) {
    for (const a of MIX) checkUsAddress(a);
    checks += MIX.length;
  }
  metrics.push({
    bench,
    metric: 'checks per second (mixed addresses)',
    value: Math.round(checks / ((performance.now() - t0) / 1000)),
    unit: 'checks/s',
  });
  return metrics;
}

if (require.main === module) {
  runAddressCheckBench().then(
    (metrics) => {
      for (const m of metrics) console.log(`[bench] ${m.bench}: ${m.metric} = ${m.value} ${m.unit}`);
    },
    (err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    },
  );
}
