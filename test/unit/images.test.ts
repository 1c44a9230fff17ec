// The shared image check: intact images pass with their size; truncated, corrupt and
// oversized ones are refused on the named field before their pixels are allocated.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import jpeg from 'jpeg-js';
import { ApiError } from '../../domain/shared/errors';
import { checkImage } from '../../domain/shared/images';

const fixture = (name: string) => readFileSync(path.join(__dirname, '..', 'fixtures', name));

async function refusal(p: Promise<unknown>): Promise<{ path: string; message: string }> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).status).toBe(400);
  return (err as ApiError).options.fields![0];
}

describe('checkImage', () => {
  it('accepts whole PNG and JPEG images and reports their size', async () => {
    expect(await checkImage(fixture('inbound-pages/sample-envelope.png'), 'photo')).toMatchObject({
      type: 'png',
      contentType: 'image/png',
      width: expect.any(Number),
    });
    expect(await checkImage(fixture('documents/image.jpg'), 'photo')).toMatchObject({
      type: 'jpg',
      contentType: 'image/jpeg',
    });
  });

  it('refuses truncated images on the named field', async () => {
    const png = fixture('inbound-pages/sample-envelope.png');
    expect(await refusal(checkImage(png.subarray(0, png.length - 100), 'page_3'))).toMatchObject({
      path: 'page_3',
      message: expect.stringMatching(/PNG image is corrupt/),
    });
    const jpg = fixture('documents/image.jpg');
    expect(await refusal(checkImage(jpg.subarray(0, jpg.length - 2), 'photo'))).toMatchObject({
      path: 'photo',
      message: expect.stringMatching(/JPEG image is corrupt/),
    });
    expect((await refusal(checkImage(Buffer.from('GIF89a....'), 'photo'))).message).toBe('must be a PNG or JPEG image');
  });

  it('refuses a JPEG whose entropy-coded data is damaged even though every marker is in place', async () => {
    const jpg = Buffer.from(fixture('documents/image.jpg'));
    const sos = jpg.indexOf(Buffer.from([0xff, 0xda]));
    const dataStart = sos + 2 + jpg.readUInt16BE(sos + 2);
    // Keep the markers and EOI; replace the scan data with bytes that are not valid Huffman codes.
    jpg.fill(0xfe, dataStart, jpg.length - 2);
    expect((await refusal(checkImage(jpg, 'photo'))).message).toMatch(/JPEG image is corrupt: it cannot be decoded/);
  });

  it('refuses a JPEG that claims more than 50 megapixels before decoding it', async () => {
    const jpg = Buffer.from(fixture('documents/image.jpg'));
    const sof = [0xc0, 0xc1, 0xc2].map((m) => jpg.indexOf(Buffer.from([0xff, m]))).find((i) => i > 0)!;
    jpg.writeUInt16BE(30000, sof + 5);
    jpg.writeUInt16BE(30000, sof + 7);
    expect((await refusal(checkImage(jpg, 'photo'))).message).toMatch(
      /30000x30000 pixels; the maximum is 50 megapixels/,
    );
  });

  it('decodes off the event loop: timers keep firing while a large photo is checked', async () => {
    // A noisy 2-megapixel JPEG (no run of flat colour) takes the pure-JS decoder a good
    // fraction of a second; the same decode on the calling thread is the yardstick.
    const width = 1600;
    const height = 1200;
    const pixels = Buffer.alloc(width * height * 4);
    let seed = 1;
    for (let i = 0; i < pixels.length; i++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      pixels[i] = seed >> 16;
    }
    const photo = jpeg.encode({ data: pixels, width, height }, 90).data;
    const started = process.hrtime.bigint();
    jpeg.decode(photo, { useTArray: true });
    const inlineDecodeMs = Number(process.hrtime.bigint() - started) / 1e6;

    await checkImage(photo, 'photo'); // starts the decoding thread
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    await checkImage(photo, 'photo');
    delay.disable();
    const longestStallMs = delay.max / 1e6;
    console.log(
      `inline decode ${inlineDecodeMs.toFixed(0)} ms; longest event-loop stall while checking ${longestStallMs.toFixed(0)} ms`,
    );
    expect(longestStallMs).toBeLessThan(inlineDecodeMs / 2);
  });
});
