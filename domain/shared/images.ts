// The one check every uploaded PNG or JPEG passes before it is accepted (outbound
// documents, facility photos of outbound pieces, sealed-exterior and label photos, scan
// pages, support attachments): the type is recognised from the bytes, the structure is
// walked (PNG chunks and checksums, JPEG markers up to the end-of-image marker), the size
// is bounded before any pixel is allocated, and then the whole image is decoded (pngjs,
// jpeg-js), so a truncated or corrupt file is refused with a 400 naming its field instead
// of being stored as proof. Pure apart from CPU work on the given bytes: no I/O.
//
// Bounds: at most MAX_IMAGE_PIXELS pixels (read from the header, before decoding), and the
// JPEG decoder's own memory limit; PNG image data is first inflated as a stream and
// abandoned past the size the header implies, so a decompression bomb is never held.
//
// The full decode runs on a worker thread (image-decode.worker.js): a 12-megapixel phone
// photo takes seconds of CPU in the pure-JS decoders, which would otherwise stall every
// other request the process is serving.
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { Piscina } from 'piscina';
import { ApiError, errors } from './errors';

export const MAX_IMAGE_PIXELS = 50_000_000;
/** The JPEG decoder's working memory limit (a 50-megapixel colour image needs about 300 MB). */
const JPEG_MAX_MEMORY_MB = 512;

let decoders: Piscina | undefined;

/** Decodes the whole image on a worker thread; true when it decoded. One core stays with the event loop. */
function decodesWhole(type: ImageType, data: Buffer): Promise<boolean> {
  decoders ??= new Piscina({
    filename: path.join(__dirname, 'image-decode.worker.js'),
    maxThreads: Math.max(1, os.availableParallelism() - 1),
    // Idle threads end, so a process that has stopped serving exits without a close call.
    idleTimeout: 10_000,
  });
  return decoders.run({
    type,
    data,
    maxResolutionInMP: MAX_IMAGE_PIXELS / 1_000_000,
    maxMemoryUsageInMB: JPEG_MAX_MEMORY_MB,
  });
}

export type ImageType = 'png' | 'jpg';

export interface CheckedImage {
  type: ImageType;
  contentType: 'image/png' | 'image/jpeg';
  extension: 'png' | 'jpg';
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The image type by its signature bytes, or null. */
export function sniffImage(data: Buffer): ImageType | null {
  if (data.length >= 8 && data.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'jpg';
  return null;
}

/**
 * Accepts `data` only if it is a whole, decodable PNG or JPEG within the size bounds;
 * otherwise a 400 validation error on `field`.
 */
export async function checkImage(data: Buffer, field: string): Promise<CheckedImage> {
  const refuse = (message: string): ApiError => errors.validation([{ path: field, message }]);
  const type = sniffImage(data);
  if (!type) throw refuse('must be a PNG or JPEG image');
  if (type === 'png') {
    const { width, height } = await checkPngStructure(data, refuse);
    if (!(await decodesWhole(type, data))) throw refuse('the PNG image is corrupt: it cannot be decoded');
    return { type, contentType: 'image/png', extension: 'png', width, height };
  }
  const { width, height } = checkJpegStructure(data, refuse);
  if (!(await decodesWhole(type, data))) throw refuse('the JPEG image is corrupt: it cannot be decoded');
  return { type, contentType: 'image/jpeg', extension: 'jpg', width, height };
}

const tooLarge = (kind: string, width: number, height: number) =>
  `the ${kind} image is ${width}x${height} pixels; the maximum is ${MAX_IMAGE_PIXELS / 1_000_000} megapixels`;

// ---------------------------------------------------------------------------------- PNG

const PNG_BITS_PER_PIXEL: Record<number, Record<number, number>> = {
  0: { 1: 1, 2: 2, 4: 4, 8: 8, 16: 16 }, // greyscale
  2: { 8: 24, 16: 48 }, // RGB
  3: { 1: 1, 2: 2, 4: 4, 8: 8 }, // palette
  4: { 8: 16, 16: 32 }, // greyscale + alpha
  6: { 8: 32, 16: 64 }, // RGBA
};

/** Bytes of filtered image data: one filter byte per row, per interlace pass when interlaced. */
function pngDataBytes(width: number, height: number, bitsPerPixel: number, interlaced: boolean): number {
  const rowBytes = (w: number) => 1 + Math.ceil((w * bitsPerPixel) / 8);
  if (!interlaced) return height * rowBytes(width);
  // Adam7 passes: [x start, x step, y start, y step].
  const passes = [
    [0, 8, 0, 8],
    [4, 8, 0, 8],
    [0, 4, 4, 8],
    [2, 4, 0, 4],
    [0, 2, 2, 4],
    [1, 2, 0, 2],
    [0, 1, 1, 2],
  ];
  let total = 0;
  for (const [x0, dx, y0, dy] of passes) {
    const w = Math.ceil((width - x0) / dx);
    const h = Math.ceil((height - y0) / dy);
    if (w > 0 && h > 0) total += h * rowBytes(w);
  }
  return total;
}

/** Every chunk intact (CRC), a valid header, and image data that inflates to exactly the size the header implies. */
async function checkPngStructure(
  data: Buffer,
  refuse: (message: string) => ApiError,
): Promise<{ width: number; height: number }> {
  const corrupt = (why: string) => refuse(`the PNG image is corrupt: ${why}`);
  let offset = 8;
  let header: { width: number; height: number; bitsPerPixel: number; colorType: number; interlaced: boolean } | null =
    null;
  let palette = false;
  let ended = false;
  const imageData: Buffer[] = [];
  while (!ended) {
    if (offset + 12 > data.length) throw corrupt('the file is truncated');
    const length = data.readUInt32BE(offset);
    const type = data.toString('latin1', offset + 4, offset + 8);
    if (length > 0x7fffffff || offset + 12 + length > data.length) throw corrupt('the file is truncated');
    const body = data.subarray(offset + 8, offset + 8 + length);
    if (zlib.crc32(data.subarray(offset + 4, offset + 8 + length)) !== data.readUInt32BE(offset + 8 + length))
      throw corrupt(`${/^[A-Za-z]{4}$/.test(type) ? `chunk ${type}` : 'a chunk'} fails its checksum`);
    offset += 12 + length;
    if (!header) {
      if (type !== 'IHDR' || length !== 13) throw corrupt('the header chunk is missing');
      const width = body.readUInt32BE(0);
      const height = body.readUInt32BE(4);
      const [bitDepth, colorType, compression, filter, interlace] = [body[8], body[9], body[10], body[11], body[12]];
      const bitsPerPixel = PNG_BITS_PER_PIXEL[colorType]?.[bitDepth];
      if (!width || !height || !bitsPerPixel || compression !== 0 || filter !== 0 || interlace > 1)
        throw corrupt('the header is invalid');
      if (width * height > MAX_IMAGE_PIXELS) throw refuse(tooLarge('PNG', width, height));
      header = { width, height, bitsPerPixel, colorType, interlaced: interlace === 1 };
    } else if (type === 'PLTE') {
      palette = true;
    } else if (type === 'IDAT') {
      imageData.push(body);
    } else if (type === 'IEND') {
      ended = true;
    }
  }
  if (!header) throw corrupt('the header chunk is missing');
  if (header.colorType === 3 && !palette) throw corrupt('the palette is missing');
  if (imageData.length === 0) throw corrupt('there is no image data');
  const expected = pngDataBytes(header.width, header.height, header.bitsPerPixel, header.interlaced);
  const inflated = await inflatedSize(Buffer.concat(imageData), expected, () =>
    corrupt('the image data cannot be decompressed'),
  );
  if (inflated !== expected) throw corrupt('the image data does not match the image size');
  return { width: header.width, height: header.height };
}

/** Bytes that zlib data inflates to, counted as a stream and abandoned past `limit`. */
function inflatedSize(compressed: Buffer, limit: number, corrupt: () => ApiError): Promise<number> {
  return new Promise((resolve, reject) => {
    const inflate = zlib.createInflate();
    let total = 0;
    inflate.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > limit) {
        inflate.destroy();
        resolve(total);
      }
    });
    inflate.on('error', () => reject(corrupt()));
    inflate.on('end', () => resolve(total));
    inflate.end(compressed);
  });
}

// --------------------------------------------------------------------------------- JPEG

const JPEG_FRAME_MARKERS = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/** Marker structure: SOI, a frame header with a size, a scan, and an EOI after the scan data. */
function checkJpegStructure(data: Buffer, refuse: (message: string) => ApiError): { width: number; height: number } {
  const corrupt = (why: string) => refuse(`the JPEG image is corrupt: ${why}`);
  let offset = 2;
  let frame: { width: number; height: number } | null = null;
  for (;;) {
    if (offset + 2 > data.length) throw corrupt('the file is truncated');
    if (data[offset] !== 0xff) throw corrupt('a marker is missing');
    while (data[offset + 1] === 0xff && offset + 2 < data.length) offset += 1; // fill bytes
    const marker = data[offset + 1];
    offset += 2;
    if (marker === 0x01) continue;
    if (marker === 0xd9) throw corrupt('there is no image scan');
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x00)
      throw corrupt('a marker is out of place');
    if (offset + 2 > data.length) throw corrupt('the file is truncated');
    const length = data.readUInt16BE(offset);
    if (length < 2 || offset + length > data.length) throw corrupt('the file is truncated');
    const segment = data.subarray(offset + 2, offset + length);
    offset += length;
    if (JPEG_FRAME_MARKERS.has(marker)) {
      const components = segment[5];
      if (
        segment.length < 6 ||
        !segment.readUInt16BE(1) ||
        !segment.readUInt16BE(3) ||
        components < 1 ||
        components > 4 ||
        segment.length !== 6 + 3 * components
      ) {
        throw corrupt('the frame header is invalid');
      }
      frame = { height: segment.readUInt16BE(1), width: segment.readUInt16BE(3) };
      if (frame.width * frame.height > MAX_IMAGE_PIXELS) throw refuse(tooLarge('JPEG', frame.width, frame.height));
    } else if (marker === 0xda) {
      if (!frame) throw corrupt('the scan comes before the frame header');
      // Entropy-coded data runs to the next marker that is not a stuffed 0xFF00 or a restart marker.
      for (;;) {
        const next = data.indexOf(0xff, offset);
        if (next < 0 || next + 1 >= data.length) throw corrupt('the file is truncated');
        const byte = data[next + 1];
        offset = next + 1;
        if (byte === 0x00 || byte === 0xff || (byte >= 0xd0 && byte <= 0xd7)) continue;
        offset = next;
        break;
      }
      if (data[offset + 1] === 0xd9) return frame;
    }
  }
}
