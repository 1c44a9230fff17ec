// The one shape of an uploaded file, as every service receives it: the multipart parser
// (api/multipart.ts) keeps the file parts of a small body in memory and streams those of a
// larger one to temporary files, so a large upload never sits in memory until the service
// needs it. Services read the bytes with uploadBytes, wherever they are.
import { readFile } from 'node:fs/promises';

interface UploadedFileInfo {
  /** The form field the file came in (page_1, photo, template ...). */
  fieldName: string;
  originalFilename: string | null;
  mimetype: string | null;
  size: number;
}

export type UploadedFile = UploadedFileInfo &
  /** The bytes of a file from a small body, kept in memory. */
  (
    | { data: Buffer; filepath?: undefined }
    /** The temporary file holding the bytes (removed once the request is answered). */
    | { data?: undefined; filepath: string }
  );

/** The file's bytes, from memory or from its temporary file. */
export async function uploadBytes(file: UploadedFile): Promise<Buffer> {
  return file.data !== undefined ? file.data : readFile(file.filepath);
}
