// The one OCR engine of the service, used by forwarded email (images and scanned PDF
// pages) and by physical scans alike: Tesseract 5 with the English model (Debian
// packages tesseract-ocr, tesseract-ocr-eng; the binary is config.tesseractPath, from
// `TESSERACT_PATH`, default `tesseract`, passed in by the caller as an OcrEngine),
// always with OMP_THREAD_LIMIT=1 (Tesseract's own threads only fight the API and the
// worker for the machine's cores and make a page several times slower), TSV output read
// by domain/inbound-email/ocr.ts into layout text, a page confidence and uncertain spans.
// PDF pages are rasterised by poppler's pdftoppm first. Nothing is downloaded.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { OcrPage, parseTesseractTsv } from '../../domain/inbound-email/ocr';

export const OCR_DPI = 300;
export const OCR_LANGUAGE = 'eng';
const OCR_TIMEOUT_MS = 120_000;

export type OcrErrorCode = 'provider_unavailable' | 'timeout' | 'source_invalid';
export type OcrRun =
  | { ok: true; page: OcrPage; model: string; elapsedMs: number }
  | { ok: false; errorCode: OcrErrorCode; retryable: boolean; message: string };

/** Which Tesseract to run: Config has this field, so callers pass deps.config. */
export interface OcrEngine {
  tesseractPath: string;
}

/** The version of each Tesseract binary, asked once per process. */
const tesseractVersions = new Map<string, string>();

type RunError = NodeJS.ErrnoException & { killed?: boolean; signal?: string; stderr?: string; stdout?: string };

function run(cmd: string, args: string[], timeout: number): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // The child's environment, not a setting: the service's own environment plus the
    // thread limit that every OCR run needs.
    // eslint-disable-next-line no-restricted-syntax -- passes the environment on, reads no setting
    const env = { ...process.env, OMP_THREAD_LIMIT: '1' };
    execFile(cmd, args, { timeout, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8', env }, (err, stdout, stderr) =>
      err ? reject(Object.assign(err, { stdout, stderr })) : resolve({ stdout, stderr }),
    );
  });
}

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ocr-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function failure(tool: string, err: RunError): OcrRun {
  if (err.code === 'ENOENT')
    return { ok: false, errorCode: 'provider_unavailable', retryable: false, message: `${tool} is not installed` };
  if (err.killed || err.signal === 'SIGTERM')
    return {
      ok: false,
      errorCode: 'timeout',
      retryable: true,
      message: `${tool} took longer than ${OCR_TIMEOUT_MS / 1000} s`,
    };
  return {
    ok: false,
    errorCode: 'source_invalid',
    retryable: false,
    message: `${tool} could not read the source: ${(err.stderr || err.message).trim().slice(0, 300)}`,
  };
}

/** The engine's name and version, e.g. `tesseract-5.3.0`; null when it is not installed. */
async function model(engine: OcrEngine): Promise<string | null> {
  let version = tesseractVersions.get(engine.tesseractPath);
  if (!version) {
    try {
      const { stdout, stderr } = await run(engine.tesseractPath, ['--version'], 10_000);
      version = /tesseract\s+v?([\d.]+)/i.exec(`${stdout}${stderr}`)?.[1] ?? 'unknown';
    } catch (err) {
      if ((err as RunError).code === 'ENOENT') return null;
      version = 'unknown';
    }
    tesseractVersions.set(engine.tesseractPath, version);
  }
  return `tesseract-${version}`;
}

/** OCR of one image file (PNG, JPEG, TIFF, GIF, WebP). */
export async function ocrImageFile(engine: OcrEngine, file: string): Promise<OcrRun> {
  const name = await model(engine);
  if (!name)
    return { ok: false, errorCode: 'provider_unavailable', retryable: false, message: 'tesseract is not installed' };
  const started = Date.now();
  try {
    const { stdout } = await run(
      engine.tesseractPath,
      [file, 'stdout', '-l', OCR_LANGUAGE, '--psm', '3', 'tsv'],
      OCR_TIMEOUT_MS,
    );
    return { ok: true, page: parseTesseractTsv(stdout), model: name, elapsedMs: Date.now() - started };
  } catch (err) {
    return failure('tesseract', err as RunError);
  }
}

export async function ocrImage(engine: OcrEngine, image: Buffer, extension: string): Promise<OcrRun> {
  return withTempDir(async (dir) => {
    const file = path.join(dir, `page.${extension || 'img'}`);
    await writeFile(file, image);
    return ocrImageFile(engine, file);
  });
}

/** Rasterises the given pages (1-based) of a PDF at OCR_DPI and OCRs each; `onPage` runs after each page. */
export async function ocrPdfPages(
  engine: OcrEngine,
  pdf: Buffer,
  pages: number[],
  onPage: (page: number) => void = () => undefined,
): Promise<OcrRun[]> {
  return withTempDir(async (dir) => {
    const file = path.join(dir, 'in.pdf');
    await writeFile(file, pdf);
    const out: OcrRun[] = [];
    for (const page of pages) {
      const base = path.join(dir, `page-${page}`);
      try {
        await run(
          'pdftoppm',
          ['-r', String(OCR_DPI), '-gray', '-png', '-singlefile', '-f', String(page), '-l', String(page), file, base],
          OCR_TIMEOUT_MS,
        );
      } catch (err) {
        out.push(failure('pdftoppm', err as RunError));
        continue;
      }
      out.push(await ocrImageFile(engine, `${base}.png`));
      onPage(page);
    }
    return out;
  });
}
