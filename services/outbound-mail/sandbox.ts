// Sandbox stand-ins for what a facility would produce: real PNG photos for each
// fulfillment step, and a real PDF letter for test pieces created without a document.
import { PNG } from 'pngjs';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { PhotoCategory } from '../../domain/workflow-safe/mail-rules';

const COLOURS: Record<PhotoCategory, [number, number, number]> = {
  pages: [245, 245, 240],
  envelope: [222, 196, 150],
  receipt: [250, 250, 250],
  delivery: [120, 160, 200],
};

/**
 * A 320x200 PNG: the category's colour with a darker band pattern derived from the piece
 * id, so each piece's simulated photos differ while a retried step yields the same bytes.
 */
export function sandboxPhotoPng(category: PhotoCategory, outboundMailId: string): Buffer {
  const png = new PNG({ width: 320, height: 200 });
  const [r, g, b] = COLOURS[category];
  const seed = parseInt(outboundMailId.replace(/[^0-9a-f]/gi, '').slice(0, 6) || '0', 16);
  for (let y = 0; y < png.height; y++) {
    for (let x = 0; x < png.width; x++) {
      const i = (png.width * y + x) << 2;
      const band = ((x + (seed % 40)) >> 4) % 3 === 0 && y > 30 && y < 170;
      png.data[i] = band ? r >> 1 : r;
      png.data[i + 1] = band ? g >> 1 : g;
      png.data[i + 2] = band ? b >> 1 : b;
      png.data[i + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}

/** A simulated letter of `pages` pages that names the piece, for POST /v1/test/mail. */
export async function simulatedLetterPdf(pages: number, outboundMailId: string): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let n = 1; n <= pages; n++) {
    const page = doc.addPage([612, 792]);
    page.drawText('SANDBOX TEST LETTER - NOT MAILED', { x: 72, y: 720, size: 16, font });
    page.drawText(`Outbound mail ${outboundMailId}`, { x: 72, y: 690, size: 10, font });
    page.drawText(`Page ${n} of ${pages}`, { x: 72, y: 72, size: 10, font });
  }
  doc.setTitle(`Sandbox letter ${outboundMailId}`);
  return Buffer.from(await doc.save());
}
