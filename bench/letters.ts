// Letters that are laid out before they are priced: a one-page HTML letter's dry run
// (POST /v1/mail with dry_run=true: Chromium renders it, the proof is rendered and stored)
// at c=1 and c=4, and a one-page DOCX's dry run (LibreOffice lays it out) at c=1. Reports
// p50/p99 and the CPU each dry run costs the API process and the renderers it runs
// (Chromium's processes and the soffice conversions are its descendants). A child that
// exits is reaped by its parent, whose cutime/cstime then hold its CPU, so the tree's CPU
// is each live process's own time plus its reaped children's.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { BenchMetric } from './run';
import { BenchServices, metric, percentile, RECIPIENT } from './services';

const TICK_MS = 10;

interface Stat {
  ppid: number;
  own: number;
  reaped: number;
}

function stat(pid: number): Stat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return {
      ppid: Number(f[1]),
      own: (Number(f[11]) + Number(f[12])) * TICK_MS,
      reaped: (Number(f[13]) + Number(f[14])) * TICK_MS,
    };
  } catch {
    return null;
  }
}

/** CPU ms of a process and its descendants: the root's own time, and each descendant's own and reaped children's time. */
export function treeCpuMs(root: number): { root: number; descendants: number } {
  const stats = new Map<number, Stat>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(Number(entry));
    if (s) stats.set(Number(entry), s);
  }
  const children = new Map<number, number[]>();
  for (const [pid, s] of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  let descendants = 0;
  const pending = [...(children.get(root) ?? [])];
  while (pending.length) {
    const pid = pending.pop()!;
    const s = stats.get(pid)!;
    descendants += s.own + s.reaped;
    pending.push(...(children.get(pid) ?? []));
  }
  const r = stats.get(root);
  // The root's reaped children are descendants that already exited (soffice conversions, a killed browser).
  return { root: r?.own ?? 0, descendants: descendants + (r?.reaped ?? 0) };
}

function multipart(document: Buffer, filename: string, contentType: string): { body: Buffer; type: string } {
  const boundary = `----letters${randomBytes(8).toString('hex')}`;
  const fields = { ...RECIPIENT, dry_run: 'true', allow_duplicate: 'true' };
  const parts: Buffer[] = Object.entries(fields).map(([name, value]) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
  );
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="document"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n`,
    ),
    document,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

/** A one-page letter in HTML with its own styles. */
const HTML_LETTER = Buffer.from(
  '<!DOCTYPE html><html><head><style>body{font-family:Carlito,sans-serif;font-size:11.5pt} h1{font-family:Caladea}</style></head><body>' +
    '<p>June 12, 2026</p><p>Ms. Ada Rivera<br>1 Main Street<br>Austin, TX 78701</p><h1>Your account</h1>' +
    '<p>Dear Ms. Rivera,</p>' +
    '<p>Thank you for your letter of June 3. We have reviewed the enclosed documents and confirm the details below. '.repeat(
      6,
    ) +
    '</p><table><tr><th>Item</th><th>Amount</th></tr><tr><td>Rent</td><td>$1,200.00</td></tr></table>' +
    '<p>Sincerely,<br>The Service</p></body></html>',
);

interface Window {
  latencies: number[];
  statuses: Record<number, number>;
  cpu: { root: number; descendants: number };
  seconds: number;
}

async function window(
  url: string,
  key: string,
  doc: { body: Buffer; type: string },
  c: number,
  n: number,
  pid: number,
) {
  const before = treeCpuMs(pid);
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        next++;
        const t = performance.now();
        const res = await fetch(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'x-service-md-version': '1', 'content-type': doc.type },
          body: doc.body,
        });
        await res.arrayBuffer();
        latencies.push(performance.now() - t);
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  // Renderer processes that just closed are reaped within a moment.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const after = treeCpuMs(pid);
  const w: Window = {
    latencies: latencies.sort((a, b) => a - b),
    statuses,
    cpu: { root: after.root - before.root, descendants: after.descendants - before.descendants },
    seconds,
  };
  return w;
}

export async function runLettersBench(
  s: BenchServices,
  opts: { log?: (m: string) => void } = {},
): Promise<BenchMetric[]> {
  const log = opts.log ?? (() => undefined);
  const api = s.apis[0];
  const url = `${api.baseUrl}/v1/mail`;
  const pid = api.proc.pid;
  const metrics: BenchMetric[] = [];
  const html = multipart(HTML_LETTER, 'letter.html', 'text/html');
  const docx = multipart(
    readFileSync(path.join(__dirname, '..', 'test', 'fixtures', 'documents', 'docx-1-page.docx')),
    'letter.docx',
    'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  );
  const report = (name: string, w: Window) => {
    const n = w.latencies.length;
    log(
      `${name}: ${n} dry runs in ${w.seconds.toFixed(1)} s, p50 ${percentile(w.latencies, 50).toFixed(0)} ms, p99 ${percentile(w.latencies, 99).toFixed(0)} ms, ` +
        `CPU per dry run: API ${(w.cpu.root / n).toFixed(0)} ms + renderer processes ${(w.cpu.descendants / n).toFixed(0)} ms, statuses ${JSON.stringify(w.statuses)}`,
    );
    metrics.push(
      metric(name, 'p50 latency', percentile(w.latencies, 50), 'ms'),
      metric(name, 'p99 latency', percentile(w.latencies, 99), 'ms'),
      metric(name, 'dry runs per second', n / w.seconds, 'req/s'),
      metric(name, 'CPU per dry run: API process', w.cpu.root / n, 'ms'),
      metric(name, 'CPU per dry run: renderer processes (Chromium or soffice)', w.cpu.descendants / n, 'ms'),
      metric(name, 'answers other than 200', n - (w.statuses[200] ?? 0), 'requests'),
    );
  };

  // Warm-up: the browser starts on the first render, JIT and pools warm up.
  await window(url, s.quietTestKey, html, 2, 6, pid);
  report('letters html dry_run c=1', await window(url, s.quietTestKey, html, 1, 30, pid));
  report('letters html dry_run c=4', await window(url, s.quietTestKey, html, 4, 60, pid));
  await window(url, s.quietTestKey, docx, 1, 1, pid);
  report('letters docx dry_run c=1', await window(url, s.quietTestKey, docx, 1, 6, pid));
  return metrics;
}
