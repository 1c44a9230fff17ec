// How a document the renderers will not turn into a PDF is refused: a 400 naming the
// field the document came in (`document` for a letter) with the reason in words, and the
// reason as a word in details.render_refusal, so a caller that renders many documents
// (a merged batch) can list each refused row with its reason.
import { ApiError } from '../../../domain/shared/errors';

export type RenderRefusalReason =
  /** more input than a renderer takes (HTML bytes, a DOCX's decompressed parts) */
  | 'too_large'
  /** lays out to more pages than allowed */
  | 'too_many_pages'
  /** did not finish within the render time limit */
  | 'timeout'
  /** tries to leave the page it is (a meta refresh) */
  | 'navigation'
  /** crashed the renderer, twice */
  | 'crashed'
  /** cannot be read or converted */
  | 'unreadable';

export function renderRefusal(field: string, reason: RenderRefusalReason, message: string): ApiError {
  return new ApiError(400, 'Validation failed', {
    fields: [{ path: field, message }],
    details: { render_refusal: reason },
    retryable: false,
    suggestedAction: 'Fix the document as the message says and send the request again; nothing was stored or charged.',
  });
}

/** The reason of a render refusal, or null for any other error. */
export function renderRefusalReason(err: unknown): RenderRefusalReason | null {
  if (!(err instanceof ApiError) || err.status !== 400) return null;
  const reason = err.options.details?.render_refusal;
  return typeof reason === 'string' ? (reason as RenderRefusalReason) : null;
}
