// Print-proof render cost for the largest documents a letter may carry: a 200-page PDF just
// under the 10 MB upload limit (each page a block of incompressible image data plus a line
// of text, so the bytes are as hard to copy as a scanned letter's), rendered in colour
// simplex and in black-and-white duplex, a 200-page TXT, and the two hardest PNGs. Each case runs in its own
// child process so its peak RSS is its own. Not part of `npm run bench`; run it with
// `npx tsx bench/print-proof.ts`, or `npx tsx bench/print-proof.ts --off-thread` for the way
// the API and the worker render (services/outbound-mail/print-proofs.ts: a worker thread;
// each case first renders a 1-page letter on a cold thread, then the case on the warm one,
// and the stall is the calling thread's, which is what other requests wait for). Prints one line per case: wall time, CPU time, the
// longest event-loop stall, RSS before and at its peak during the render (sampled every
// 5 ms), the growth of heap plus Buffers, and the proof's size.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  concatTransformationMatrix,
  drawObject,
  PDFDocument,
  popGraphicsState,
  pushGraphicsState,
  StandardFonts,
} from 'pdf-lib';
import { PNG } from 'pngjs';
import { inspectDocument, MAX_DOCUMENT_BYTES } from '../domain/outbound-mail/documents';
import { renderPrintProof, PrintProof, PrintProofInput } from '../domain/outbound-mail/print-proof';
import { renderProofOffThread } from '../services/outbound-mail/print-proofs';

const CASES = [
  'pdf-1-page',
  'pdf-color-simplex',
  'pdf-gray-duplex',
  'txt-color-simplex',
  'png-noise-9mb',
  'png-50mp-flat',
] as const;
type Case = (typeof CASES)[number];

/** 200 Letter pages, each with a 100 x 170 RGB image of random bytes (51 KB, stored raw) and a line of text: about 10.3 MB. */
async function bigPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let n = 1; n <= 200; n++) {
    const page = doc.addPage([612, 792]);
    const image = doc.context.register(
      doc.context.stream(randomBytes(100 * 170 * 3), {
        Type: 'XObject',
        Subtype: 'Image',
        Width: 100,
        Height: 170,
        ColorSpace: 'DeviceRGB',
        BitsPerComponent: 8,
      }),
    );
    const name = page.node.newXObject('Im', image);
    page.pushOperators(
      pushGraphicsState(),
      concatTransformationMatrix(400, 0, 0, 680, 106, 56),
      drawObject(name),
      popGraphicsState(),
    );
    page.drawText(`Page ${n} of 200`, { x: 72, y: 750, size: 12, font });
  }
  return doc.save();
}

/** 200 pages of 66 full 80-column lines. */
function bigText(): Uint8Array {
  const line = 'The quick brown fox jumps over the lazy dog. 0123456789 ,.;:!? ()[]{} <>=+-*/ ';
  return Buffer.from(
    Array.from({ length: 200 * 66 }, (_, i) => `${String(i).padStart(5, '0')} ${line}`.slice(0, 80)).join('\n'),
  );
}

/**
 * PNGs, which pdf-lib decodes in JavaScript to split colour from alpha: 1,750 x 1,750 of
 * noise (9 MB, the most bytes) and 7,000 x 7,000 of one colour (a small file, but the
 * 50-megapixel limit of domain/shared/images.ts).
 */
function bigPng(name: Case): Uint8Array {
  const side = name === 'png-noise-9mb' ? 1750 : 7000;
  const png = new PNG({ width: side, height: side, colorType: 2, inputHasAlpha: true });
  if (name === 'png-noise-9mb') randomBytes(side * side * 4).copy(png.data);
  else png.data.fill(200);
  return PNG.sync.write(png, { colorType: 2 });
}

/** A typical letter: one page of text. */
async function onePagePdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  doc.addPage([612, 792]).drawText('Dear Jane, this is a one-page letter.', { x: 72, y: 700, size: 12, font });
  return doc.save();
}

const documentFor = async (name: Case): Promise<Uint8Array> => {
  if (name === 'pdf-1-page') return onePagePdf();
  if (name.startsWith('pdf')) return bigPdf();
  if (name.startsWith('png')) return bigPng(name);
  return bigText();
};

async function runCase(name: Case, offThread: boolean): Promise<void> {
  let render = (input: PrintProofInput): Promise<PrintProof> => renderPrintProof(input);
  let coldMs: number | null = null;
  if (offThread) {
    render = (input) => renderProofOffThread(input, 600_000);
    const started = performance.now();
    const letter = await onePagePdf();
    await render({
      document: { bytes: letter, kind: 'pdf', pageCount: 1 },
      recipient: { name: 'A', line1: '1 Main St', city: 'Austin', state: 'TX', zip: '78701' },
      returnAddress: null,
      mailClass: 'first_class',
      color: false,
      duplex: false,
      createdAt: new Date('2026-01-01T00:00:00Z'),
    });
    coldMs = performance.now() - started;
  }
  const bytes = await documentFor(name);
  const inspected = await inspectDocument(Buffer.from(bytes), null);
  if (bytes.length > MAX_DOCUMENT_BYTES)
    throw new Error(`the bench document is ${bytes.length} bytes, over the upload limit`);
  const input: PrintProofInput = {
    document: { bytes, kind: inspected.type, pageCount: inspected.pageCount },
    recipient: { name: 'Jane Doe', line1: '123 Main St', city: 'Springfield', state: 'IL', zip: '62701' },
    returnAddress: { name: 'John Sender', line1: '1 Return Rd', city: 'Austin', state: 'TX', zip: '78701' },
    mailClass: 'first_class',
    color: !name.includes('gray'),
    duplex: name.includes('duplex'),
    createdAt: new Date('2026-01-01T00:00:00Z'),
  };
  global.gc?.();
  // JS heap plus the Buffers and typed arrays outside it, where the PDF bytes live.
  const held = () => {
    const m = process.memoryUsage();
    return { rss: m.rss, data: m.heapUsed + m.external };
  };
  const before = held();
  const peak = { ...before };
  // The longest gap between two 5 ms samples (or the last one and the end) is the longest
  // time the render kept the event loop from serving anything else.
  let lastTick = performance.now();
  let longestStall = 0;
  const sample = () => {
    const now = held();
    peak.rss = Math.max(peak.rss, now.rss);
    peak.data = Math.max(peak.data, now.data);
    const t = performance.now();
    longestStall = Math.max(longestStall, t - lastTick);
    lastTick = t;
  };
  const sampler = setInterval(sample, 5);
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const proof = await render(input);
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const cpuUsed = process.cpuUsage(cpu);
  sample();
  clearInterval(sampler);
  const mb = (b: number) => (b / 1024 / 1024).toFixed(1);
  console.log(
    [
      `${name}${offThread ? ' (thread)' : ''}`.padEnd(27),
      ...(coldMs === null ? [] : [`cold thread 1-page ${coldMs.toFixed(0)} ms`]),
      `input ${mb(bytes.length)} MB / ${inspected.pageCount} pages`,
      `proof ${mb(proof.pdf.length)} MB / ${proof.pageCount} pages / ${proof.sheets} sheets`,
      `wall ${wallMs.toFixed(0)} ms`,
      `cpu ${((cpuUsed.user + cpuUsed.system) / 1000).toFixed(0)} ms`,
      `longest event-loop stall ${longestStall.toFixed(0)} ms`,
      `rss ${mb(before.rss)} -> peak ${mb(peak.rss)} MB`,
      `heap+buffers peak +${mb(peak.data - before.data)} MB`,
    ].join(' | '),
  );
}

async function main(): Promise<void> {
  const offThread = process.argv.includes('--off-thread');
  const only = process.argv.slice(2).find((a) => !a.startsWith('--')) as Case | undefined;
  if (only) return runCase(only, offThread);
  for (const name of CASES) {
    for (let round = 1; round <= 2; round++) {
      await new Promise<void>((resolve, reject) => {
        const child = fork(__filename, [name, ...(offThread ? ['--off-thread'] : [])], {
          execArgv: [...process.execArgv, '--expose-gc'],
        });
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${name} exited with ${code}`))));
      });
    }
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
