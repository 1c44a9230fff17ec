// The one shape of an uploaded file, as every service receives it: the multipart parser
// (api/multipart.ts) stores each file part in a temporary file and hands services this
// description of it. Services read the bytes from `filepath` themselves, so a large upload
// never sits in memory until the service needs it.
export interface UploadedFile {
  /** The form field the file came in (page_1, photo, template ...). */
  fieldName: string;
  /** The temporary file holding the bytes. */
  filepath: string;
  originalFilename: string | null;
  mimetype: string | null;
  size: number;
}
