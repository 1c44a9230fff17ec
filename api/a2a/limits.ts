// The A2A endpoint's body limit, a module of its own so that the discovery documents can state
// it without importing the endpoint (which serves the agent card they also build).
import { MAX_DOCUMENT_BYTES } from '../../domain/outbound-mail/documents';
import { MAX_FREE_FORM_JSON_BYTES } from '../../domain/shared/json-limits';

/**
 * The largest request: send_letter with a 10 MB document as base64 (13,981,016 bytes), its
 * metadata (16 KiB) and 64 KiB for the recipient, the options and the JSON-RPC envelope.
 */
export const A2A_BODY_LIMIT = Math.ceil(MAX_DOCUMENT_BYTES / 3) * 4 + MAX_FREE_FORM_JSON_BYTES + 64 * 1024;
