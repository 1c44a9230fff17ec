// What a create-batch request carries, a module of its own so that drafts.ts and merged.ts,
// which calls back into it, both name it without importing each other.
import type { BatchMailingClass, BatchMailType } from '../../domain/batches/pricing';
import type { ColumnMap } from '../../domain/batches/recipients-csv';
import type { UploadedFile } from '../shared/uploads';

export interface CreateBatchInput {
  job_name: string;
  mail_type: BatchMailType;
  mailing_class: BatchMailingClass;
  duplex: boolean;
  color: boolean;
  column_map?: ColumnMap;
  /** Scheduled send (extension; scheduled-send.ts). */
  send_after?: string;
  template?: UploadedFile;
  recipients?: UploadedFile;
  /** Merged batches (extension; merged.ts): one of the member's merge templates instead of the template file. */
  template_id?: string;
  template_version?: number;
}
