// The fields of a validated submission (POST /v1/mail, POST /v1/test/mail, MCP
// send_outbound_mail) and the return address they give a piece; shared by the quote, the
// address review and the stored row, so it imports none of them.
import type { MailClass } from '../../domain/outbound-mail/pricing';
import type { ReturnAddressColumns } from '../accounts/rows';

/** Validated submission fields (POST /v1/mail, POST /v1/test/mail, MCP send_outbound_mail). */
export interface SubmitMailFields {
  recipient_name?: string;
  recipient_company?: string;
  recipient_line1: string;
  recipient_line2?: string;
  recipient_city: string;
  recipient_state: string;
  recipient_zip: string;
  recipient_country: string;
  return_name?: string;
  return_company?: string;
  return_line1?: string;
  return_line2?: string;
  return_city?: string;
  return_state?: string;
  return_zip?: string;
  mail_class: MailClass;
  color: boolean;
  duplex: boolean;
  page_count?: number;
  package_id?: string;
  inbound_capture_id?: string;
  postal_mail_thread_id?: string;
  mail_run_id?: string;
  agent_notes?: string;
  requires_approval: boolean;
  metadata?: Record<string, unknown>;
  dry_run: boolean;
  allow_duplicate: boolean;
  /** Scheduled send (extension; scheduled-send.ts). */
  send_after?: string;
  /** Extension: refuse (400) a recipient address the offline check finds doubtful. */
  strict_address?: boolean;
}

/** The return address: the request's whole block when it sent one, else the member's default. */
export function returnAddress(f: SubmitMailFields, m: ReturnAddressColumns) {
  const sentBlock = f.return_line1 !== undefined;
  return {
    return_name: f.return_name ?? m.return_name,
    return_company: f.return_company ?? m.return_company,
    return_line1: sentBlock ? f.return_line1! : m.return_line1,
    return_line2: sentBlock ? (f.return_line2 ?? null) : m.return_line2,
    return_city: sentBlock ? f.return_city! : m.return_city,
    return_state: sentBlock ? f.return_state! : m.return_state,
    return_zip: sentBlock ? f.return_zip! : m.return_zip,
  };
}
