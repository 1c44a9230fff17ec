// Shared zod pieces: pagination, multipart coercions, ids, visible text, the test_mode field.
import { z } from 'zod';
import {
  hasVisibleCharacter,
  hiddenCharacterProblem,
  TextLayout,
  VISIBLE_CHARACTER_MESSAGE,
} from '../../domain/workflow-safe/visible-text';
import {
  inspectJson,
  JSON_BODY_LIMITS,
  MAX_FREE_FORM_JSON_BYTES,
  MAX_JSON_DEPTH,
} from '../../domain/shared/json-limits';

/**
 * The largest value a Postgres integer column holds. Every integer a request carries is
 * bounded by it or less, so none can overflow its column (a 500) instead of being refused.
 */
export const PG_INT_MAX = 2_147_483_647;

/** An object's version as the client last read it (versions are Postgres integers). */
export const ExpectedVersion = z.number().int().min(1).max(PG_INT_MAX);

export const Uuid = z.string().uuid();
export const IdParams = z.object({ id: z.string().uuid({ message: 'must be a UUID' }) });

/** limit/offset with the spec's defaults (20, max 100). */
export function paginationQuery(defaults: { limit?: number; max?: number; maxOffset?: number } = {}) {
  return {
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(defaults.max ?? 100)
      .default(defaults.limit ?? 20),
    offset: z.coerce
      .number()
      .int()
      .min(0)
      .max(defaults.maxOffset ?? PG_INT_MAX)
      .default(0),
  };
}

/**
 * Text that must show something (domain/workflow-safe/visible-text.ts): refuses values made only of
 * whitespace, zero-width or other invisible characters. The empty string is left to the
 * schema's own length rule, so it gets one message, not two.
 */
export function visible<T extends z.ZodString>(schema: T): T {
  return schema.refine((v) => v === '' || hasVisibleCharacter(v), { message: VISIBLE_CHARACTER_MESSAGE });
}

/** Only the hidden-character rule, for optional text that may be blank (display names, descriptions, reasons). */
export function withoutHiddenCharacters<T extends z.ZodString>(schema: T, layout: TextLayout): T {
  return schema.superRefine((v, ctx) => {
    const problem = hiddenCharacterProblem(v, layout);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** Visible, and nothing hidden: one message per field (text that shows nothing is told so, not also what it holds). */
function plain<T extends z.ZodString>(schema: T, layout: TextLayout): T {
  return schema.superRefine((v, ctx) => {
    if (v === '') return;
    const problem = hasVisibleCharacter(v) ? hiddenCharacterProblem(v, layout) : VISIBLE_CHARACTER_MESSAGE;
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/**
 * One line of text that a person reads or that prints (a name, an address line, a label):
 * visible, and without line breaks, tabs, control or invisible formatting characters such
 * as bidi overrides (domain/workflow-safe/visible-text.ts, decision 0110).
 */
export function singleLine<T extends z.ZodString>(schema: T): T {
  return plain(schema, 'single_line');
}

/** Text of several lines (notes, messages): as singleLine, but line feeds, carriage returns and tabs are kept. */
export function multiLine<T extends z.ZodString>(schema: T): T {
  return plain(schema, 'multi_line');
}

export const Pagination = z.object({
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
  has_more: z.boolean(),
});

export { pagination } from '../../domain/shared/pagination';

/** Multipart fields arrive as strings: "true"/"false", "1"/"0". */
export const formBoolean = z.preprocess((v) => {
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(s)) return true;
    if (['false', '0', 'no', 'off', ''].includes(s)) return false;
  }
  return v;
}, z.boolean());

export const formInt = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() !== '' && /^-?\d+$/.test(v.trim()) ? Number(v) : v),
  z.number().int(),
);

/** An integer sent as text (a header): digits only, from min to max; advertised as an integer with those bounds. */
export function textInt(min: number, max: number) {
  const message = `must be an integer from ${min} to ${max}`;
  return z.preprocess(
    (v) => (typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v.trim()) : v),
    z.number({ error: message }).int({ message }).min(min, { message }).max(max, { message }),
  );
}

/**
 * A free-form JSON object stored and echoed as sent. Its size, depth and NUL characters
 * are checked on the bytes as sent, before parsing: by the JSON body reader and the MCP
 * endpoint for the top-level fields named in FREE_FORM_JSON_FIELDS, and by
 * formJsonObject for a multipart field.
 */
export const FreeFormJson = z
  .record(z.string(), z.unknown())
  .describe(
    `a JSON object of at most ${MAX_FREE_FORM_JSON_BYTES} bytes as sent, nested at most ${MAX_JSON_DEPTH} levels`,
  );

/**
 * A JSON object sent as a multipart text field (or already parsed, from JSON and MCP
 * bodies): the text is held to `maxBytes` and to the JSON body limits before JSON.parse.
 */
export function formJsonObject(maxBytes = MAX_FREE_FORM_JSON_BYTES) {
  return z.preprocess((v, ctx) => {
    if (typeof v !== 'string') return v;
    const bytes = Buffer.from(v);
    const problem =
      bytes.length > maxBytes
        ? `must be a JSON object of at most ${maxBytes} bytes as sent`
        : inspectJson(bytes, JSON_BODY_LIMITS).problem?.message;
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  }, FreeFormJson);
}

/** The response entry of every route that sends its object's workflow an Update. */
export const WORKFLOW_UNAVAILABLE_RESPONSE = {
  503: {
    description:
      'WORKFLOW_UNAVAILABLE (retryable): no worker answered within the deadline (default 10 s). The step may still be applied once ' +
      'the workflow runs: retry the same request with the same Idempotency-Key; it is applied at most once and the retry answers its outcome. ' +
      'details.deadline_ms says how long the API waited (WORKFLOW_UPDATE_DEADLINE_MS).',
  },
};

export const TestMode = { test_mode: z.boolean() };
