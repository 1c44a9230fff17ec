// A merged batch's rendering: 1,000 pieces of one HTML template, each row's values merged
// in (escaped) and rendered by the letter renderer as a worker renders them (the renderer's
// slots, RENDER_HTML_CONCURRENCY), rows laid out together and split per row with pdf-lib
// (services/templates/merged-render.ts). Reports pieces rendered per second against the
// target of 10 per second on the 2-core machine (10,000 pieces in under 17 minutes), and
// checks every piece came out with the one page it should have.
import { loadConfig } from '../config';
import { createLogger } from '../services/shared/logger';
import { createRenderers } from '../services/shared/rendering';
import { MergedRenderer } from '../services/templates/merged-render';
import type { BenchMetric } from './run';
import { metric } from './services';

export const MERGED_TEMPLATE =
  '<!DOCTYPE html><html><head><style>body{font-family:Carlito,sans-serif;font-size:12pt} h1{font-family:Caladea;font-size:20pt}' +
  ' .offer{border:2px solid #235;padding:12pt;margin-top:18pt}</style></head><body>' +
  '<p>{{date}}</p><p>{{name}}<br>{{street}}<br>{{city}}, {{state}} {{zip}}</p>' +
  '<h1>Hello {{first_name}},</h1><p>Thank you for being a customer since {{since}}. Your account {{account}} has ' +
  '{{points}} points waiting. {{#vip}}As a VIP member you also get free shipping on every order.{{/vip}}</p>' +
  '<div class="offer"><p>Bring this letter to any of our stores before {{expires}} for {{discount}} off.</p></div>' +
  '<p>Sincerely,<br>The Example Store team</p></body></html>';

export function mergedRows(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    values: {
      date: 'June 12, 2026',
      name: `Customer ${i + 1} <&> "Quoted"`,
      first_name: `Ada${i + 1}`,
      street: `${100 + i} Main Street`,
      city: 'Austin',
      state: 'TX',
      zip: '78701',
      since: String(2000 + (i % 25)),
      account: `AC-${String(i).padStart(6, '0')}`,
      points: String((i * 37) % 5000),
      vip: i % 3 === 0,
      expires: 'July 31, 2026',
      discount: `${5 + (i % 4) * 5}%`,
    },
  }));
}

export async function runMergedBench(
  opts: { log?: (m: string) => void; pieces?: number } = {},
): Promise<BenchMetric[]> {
  const log = opts.log ?? (() => undefined);
  const pieces = opts.pieces ?? 1000;
  const config = loadConfig();
  const renderers = createRenderers(config.rendering, createLogger('warn', 'bench-merged'));
  const merged = new MergedRenderer(renderers.html);
  const options = { maxPagesPerRow: 1, allowance: 'letter takes 1-3 pages', emptyIsMissing: true };
  try {
    // Warm the browser (its start is paid once per worker process, not per batch).
    await merged.render(MERGED_TEMPLATE, mergedRows(2), options);
    const rows = mergedRows(pieces);
    const cpuBefore = process.cpuUsage();
    const started = Date.now();
    const outcomes = await merged.render(MERGED_TEMPLATE, rows, options);
    const seconds = (Date.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const rendered = outcomes.filter((o) => o.ok && o.pageCount === 1).length;
    if (rendered !== pieces) throw new Error(`merged bench: ${rendered} of ${pieces} pieces rendered with one page`);
    const perSecond = pieces / seconds;
    log(`merged: ${pieces} pieces in ${seconds.toFixed(1)} s = ${perSecond.toFixed(1)} pieces/s`);
    return [
      metric('merged', `${pieces}-piece merged batch: pieces rendered per second`, perSecond, 'pieces/s', {
        text: '>= 10',
        ok: perSecond >= 10,
      }),
      metric('merged', `${pieces}-piece merged batch: wall time`, seconds, 's'),
      metric('merged', 'Node CPU per piece (merge, split, save)', (cpu.user + cpu.system) / 1000 / pieces, 'ms'),
    ];
  } finally {
    await renderers.close();
  }
}
