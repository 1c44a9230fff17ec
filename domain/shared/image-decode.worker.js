// Runs in a worker thread (domain/shared/images.ts owns the pool): decodes one whole PNG or JPEG
// and reports whether it decoded. Plain JavaScript because worker threads load files
// without the TypeScript loader the API and the tests use; it needs only the two decoders.
const jpeg = require('jpeg-js');
const { PNG } = require('pngjs');

/** @param {{ type: 'png' | 'jpg', data: Uint8Array, maxResolutionInMP: number, maxMemoryUsageInMB: number }} task */
module.exports = function decodeImage(task) {
  const data = Buffer.from(task.data.buffer, task.data.byteOffset, task.data.byteLength);
  try {
    if (task.type === 'png') PNG.sync.read(data, { checkCRC: true });
    else
      jpeg.decode(data, {
        useTArray: true,
        formatAsRGBA: false,
        tolerantDecoding: false,
        maxResolutionInMP: task.maxResolutionInMP,
        maxMemoryUsageInMB: task.maxMemoryUsageInMB,
      });
    return true;
  } catch {
    return false;
  }
};
