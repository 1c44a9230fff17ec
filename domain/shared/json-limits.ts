// Limits on the JSON that clients send, checked on the raw bytes before anything parses
// or walks them. One linear scan (brackets counted outside strings, strings skipped with
// indexOf, never recursing) finds what would make later steps slow or crash: nesting
// deeper than MAX_JSON_DEPTH (zod, JSON.stringify and Postgres recurse), more than
// MAX_JSON_VALUES values (JSON.parse of 7 million numbers blocks the process for a
// quarter of a second), NUL characters (Postgres text cannot hold them), and the byte
// spans of the members a caller asks for (free-form objects are limited as sent; MCP
// needs a request's id without parsing it). Pure: no I/O.

/** Levels of objects and arrays a body may nest (the body itself is level 1). */
export const MAX_JSON_DEPTH = 32;
/** Values (objects, arrays, strings, numbers, literals) a body may hold. */
export const MAX_JSON_VALUES = 100_000;
/** Free-form objects stored and echoed as sent (metadata, parameters, ...), in bytes as sent. */
export const MAX_FREE_FORM_JSON_BYTES = 16 * 1024;
/** Top-level input fields that hold free-form JSON objects. */
export const FREE_FORM_JSON_FIELDS: readonly string[] = [
  'metadata',
  'parameters',
  'agent_data',
  'options',
  'merge_variables',
];

export type JsonPath = Array<string | number>;

export interface JsonProblem {
  kind: 'depth' | 'values' | 'nul' | 'size';
  /** Where: the container that went too deep, the value past the limit, the string (or key) with NUL. */
  path: JsonPath;
  message: string;
}

export interface JsonSpan {
  path: string[];
  /** Byte offsets of the member's value as sent: [start, end). */
  start: number;
  end: number;
}

export interface JsonInspection {
  /** The first problem met, or null. */
  problem: JsonProblem | null;
  /** Each occurrence of a wanted or kept member, in the order they end (repeated keys appear twice). */
  spans: JsonSpan[];
  /** Values counted up to the first problem (all of them when there is none). */
  values: number;
}

export interface JsonScanLimits {
  /** Levels below the input, which sits `envelopeDepth` levels down (an MCP request's arguments: 2). */
  maxDepth: number;
  maxValues: number;
  envelopeDepth?: number;
}

export const JSON_BODY_LIMITS: JsonScanLimits = { maxDepth: MAX_JSON_DEPTH, maxValues: MAX_JSON_VALUES };

/** The wanted member paths as a tree of keys. */
interface Wanted {
  children: Map<string, Wanted>;
  /** UTF-8 byte lengths of the children's keys: a key of another length (and no escape) is not wanted. */
  lengths: Set<number>;
  leaf: boolean;
  /** Below here (or here) is a member still wanted after a problem. */
  keep: boolean;
}

interface Frame {
  isObject: boolean;
  /** Object: byte span of the current key (quotes included); array: index of the current element. */
  keyStart: number;
  keyEnd: number;
  /** The current key decoded, once asked for. */
  key: string | null;
  index: number;
  expectKey: boolean;
  /** Where the current child value started, or -1 between children. */
  childStart: number;
  /** The path of this container, once asked for. */
  path: JsonPath | null;
  /** The wanted members below this container, or null when none can be. */
  wanted: Wanted | null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NUL_ESCAPE = Buffer.from('\\u0000');

/** True when the byte at `at` is escaped by an odd run of backslashes before it. */
function escaped(bytes: Uint8Array, at: number, from: number): boolean {
  let n = 0;
  for (let i = at - 1; i >= from && bytes[i] === BACKSLASH; i--) n++;
  return n % 2 === 1;
}

/** The index after the string that opens at `start` (its closing quote + 1), or the end. */
function stringEnd(bytes: Buffer, start: number): number {
  let close = bytes.indexOf(QUOTE, start + 1);
  while (close > 0 && escaped(bytes, close, start + 1)) close = bytes.indexOf(QUOTE, close + 1);
  return close < 0 ? bytes.length : close + 1;
}

/** Bytes skipped, or values checked, between two pauses of scanJson (a few milliseconds of work). */
export const SCAN_SLICE_BYTES = 1024 * 1024;
const SCAN_SLICE_VALUES = 10_000;

/**
 * From inside a container, the index of the bracket that closes it (strings skipped), or
 * the end; pausing every SCAN_SLICE_BYTES.
 */
function* closingBracket(bytes: Buffer, from: number): Generator<void, number> {
  let open = 0;
  let pauseAt = from + SCAN_SLICE_BYTES;
  for (let i = from; i < bytes.length; i++) {
    if (i >= pauseAt) {
      yield;
      pauseAt = i + SCAN_SLICE_BYTES;
    }
    const c = bytes[i];
    if (c === QUOTE) {
      i = stringEnd(bytes, i) - 1;
    } else if (c === 0x7b || c === 0x5b) {
      open++;
    } else if (c === 0x7d || c === 0x5d) {
      if (open === 0) return i;
      open--;
    }
  }
  return bytes.length;
}

function wantedTree(paths: string[][], kept: string[][]): Wanted | null {
  if (!paths.length && !kept.length) return null;
  const node = (): Wanted => ({ children: new Map(), lengths: new Set(), leaf: false, keep: false });
  const root = node();
  for (const [path, keep] of [...paths.map((p) => [p, false] as const), ...kept.map((p) => [p, true] as const)]) {
    let at = root;
    for (const key of path) {
      at.keep ||= keep;
      if (!at.children.has(key)) at.children.set(key, node());
      at.lengths.add(Buffer.byteLength(key));
      at = at.children.get(key)!;
    }
    at.leaf = true;
    at.keep ||= keep;
  }
  return root;
}

/** True when bytes[from, to) hold a backslash. */
function hasBackslash(bytes: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (bytes[i] === BACKSLASH) return true;
  return false;
}

/** inspectJson in one go: for small inputs (a form field) and tests. */
export function inspectJson(
  input: Uint8Array,
  limits: JsonScanLimits,
  wanted: string[][] = [],
  kept: string[][] = [],
): JsonInspection {
  const scan = scanJson(input, limits, wanted, kept);
  for (;;) {
    const step = scan.next();
    if (step.done) return step.value;
  }
}

/**
 * Scans `input` (UTF-8 JSON) once, recording the spans of the `wanted` member paths (for
 * example ['params', 'arguments', 'metadata']) up to the first problem, and of the `kept`
 * ones (an MCP request's id) until each was seen. Malformed input is scanned as far as it
 * makes sense; JSON.parse reports its syntax error afterwards. After the first problem,
 * every container that cannot hold a kept member is skipped to its closing bracket, and
 * the scan ends once every kept member was seen. It pauses (yields) after every
 * SCAN_SLICE_BYTES so that a caller can let other work run between slices of a 14 MB
 * body; the loop is written out flat for the same reason.
 */
export function* scanJson(
  input: Uint8Array,
  limits: JsonScanLimits,
  wanted: string[][] = [],
  kept: string[][] = [],
): Generator<void, JsonInspection> {
  const bytes = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  const n = bytes.length;
  const { maxValues } = limits;
  const maxDepth = limits.maxDepth + (limits.envelopeDepth ?? 0);
  // Frames of the containers currently open, down to maxDepth; deeper ones are only counted.
  const stack: Frame[] = [];
  const spans: JsonSpan[] = [];
  const tree = wantedTree(wanted, kept);
  let depth = 0;
  let values = 0;
  let problem: JsonProblem | null = null;
  let lastEnd = 0;
  let inLiteral = false;
  let nextNul = bytes.indexOf(NUL_ESCAPE);

  const decodeKey = (f: Frame): string => {
    if (f.key === null) {
      const raw = bytes.toString('utf8', f.keyStart + 1, f.keyEnd - 1);
      try {
        f.key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
      } catch {
        f.key = raw;
      }
    }
    return f.key;
  };
  const segment = (f: Frame): string | number => (f.isObject ? decodeKey(f) : f.index);
  // The path of the container stack[frames - 1]: its parent's current child.
  const containerPath = (frames: number): JsonPath => {
    const f = stack[frames - 1];
    f.path ??= frames === 1 ? [] : [...containerPath(frames - 1), segment(stack[frames - 2])];
    return f.path;
  };
  const pathOf = (frames: number): JsonPath =>
    frames === 0 ? [] : [...containerPath(frames), segment(stack[frames - 1])];
  // The wanted node of the current member of `f`; keys are decoded only when their length fits.
  const wantedChild = (f: Frame): Wanted | undefined => {
    if (!f.wanted || !f.isObject) return undefined;
    if (!f.wanted.lengths.has(f.keyEnd - f.keyStart - 2) && !hasBackslash(bytes, f.keyStart, f.keyEnd))
      return undefined;
    return f.wanted.children.get(decodeKey(f));
  };

  // Kept members not seen yet; once a problem is found and none is left, the scan ends.
  const keptMissing = new Set(kept.map((p) => p.join('\u0000')));
  let pauseAt = SCAN_SLICE_BYTES;
  let pauseAtValues = SCAN_SLICE_VALUES;
  let i = 0;
  while (i < n) {
    if (i >= pauseAt || values >= pauseAtValues) {
      yield;
      pauseAt = i + SCAN_SLICE_BYTES;
      pauseAtValues = values + SCAN_SLICE_VALUES;
    }
    if (problem) {
      if (keptMissing.size === 0) break;
      // Only kept members still matter: any other container is skipped to its closing bracket.
      if (depth > 0 && (depth !== stack.length || !stack[depth - 1].wanted?.keep)) i = yield* closingBracket(bytes, i);
      if (i >= n) break;
    }
    const c = bytes[i];
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x3a) {
      // whitespace, ':'
      inLiteral = false;
      i++;
      continue;
    }
    const frame = depth > 0 && depth === stack.length ? stack[depth - 1] : undefined;
    if (c === 0x2c || c === 0x7d || c === 0x5d) {
      // , } ]
      inLiteral = false;
      if (frame) {
        const member = frame.childStart >= 0 && frame.wanted ? wantedChild(frame) : undefined;
        if (member?.leaf) {
          const path = pathOf(depth) as string[];
          spans.push({ path, start: frame.childStart, end: lastEnd });
          if (member.keep) keptMissing.delete(path.join('\u0000'));
        }
        frame.childStart = -1;
        if (c === 0x2c) {
          if (frame.isObject) frame.expectKey = true;
          else frame.index++;
        }
      }
      if (c !== 0x2c && depth > 0) {
        if (frame) stack.pop();
        depth--;
        lastEnd = i + 1;
      }
      i++;
      continue;
    }
    let end = i + 1;
    let isKey = false;
    if (c === QUOTE) {
      end = stringEnd(bytes, i);
      isKey = frame !== undefined && frame.isObject && frame.expectKey;
      if (isKey) {
        frame!.keyStart = i;
        frame!.keyEnd = end;
        frame!.key = null;
        frame!.expectKey = false;
      }
      while (nextNul >= 0 && nextNul < i) nextNul = bytes.indexOf(NUL_ESCAPE, nextNul + 1);
      while (nextNul >= 0 && nextNul < end) {
        if (!escaped(bytes, nextNul, i + 1)) {
          if (!problem)
            problem = {
              kind: 'nul',
              path: pathOf(Math.min(depth, stack.length)),
              message: 'must not contain NUL (\\u0000) characters',
            };
          break;
        }
        nextNul = bytes.indexOf(NUL_ESCAPE, nextNul + 1);
      }
      inLiteral = false;
    } else if (c === 0x7b || c === 0x5b) {
      // { [
      inLiteral = false;
    } else if (inLiteral) {
      // the rest of a number or literal
      lastEnd = end;
      i = end;
      continue;
    } else {
      inLiteral = true;
    }
    if (!isKey) {
      // A value starts here: a string, number, literal, object or array.
      values++;
      if (values > maxValues && !problem)
        problem = {
          kind: 'values',
          path: pathOf(Math.min(depth, stack.length)),
          message: `holds more than ${maxValues} values`,
        };
      if (frame) frame.childStart = i;
      if (c === 0x7b || c === 0x5b) {
        depth++;
        if (depth > maxDepth) {
          if (!problem)
            problem = {
              kind: 'depth',
              path: pathOf(stack.length),
              message: `nests deeper than ${limits.maxDepth} levels of objects and arrays`,
            };
        } else if (stack.length === depth - 1) {
          const wantedHere = depth === 1 ? tree : frame ? (wantedChild(frame) ?? null) : null;
          stack.push({
            isObject: c === 0x7b,
            keyStart: 0,
            keyEnd: 0,
            key: null,
            index: 0,
            expectKey: c === 0x7b,
            childStart: -1,
            path: null,
            wanted: wantedHere && wantedHere.children.size ? wantedHere : null,
          });
        }
      }
    }
    if (c !== 0x7b && c !== 0x5b) lastEnd = end;
    i = end;
  }
  return { problem, spans, values };
}

/** The last span at `path` (JSON.parse keeps the last of repeated keys). */
export function spanAt(inspection: JsonInspection, path: string[]): JsonSpan | undefined {
  return inspection.spans.filter((s) => s.path.length === path.length && s.path.every((p, i) => p === path[i])).pop();
}

/** The wanted paths of the free-form fields directly under `parent`. */
export function freeFormPaths(parent: string[] = []): string[][] {
  return FREE_FORM_JSON_FIELDS.map((f) => [...parent, f]);
}

/**
 * A free-form field directly under `parent` larger than MAX_FREE_FORM_JSON_BYTES as sent,
 * as a problem at its path. Every occurrence of a repeated key counts: JSON.parse would
 * build each before keeping the last. Needs the scan to have wanted freeFormPaths(parent).
 */
export function oversizedFreeForm(inspection: JsonInspection, parent: string[] = []): JsonProblem | null {
  for (const s of inspection.spans) {
    if (s.path.length !== parent.length + 1 || !parent.every((p, i) => s.path[i] === p)) continue;
    if (FREE_FORM_JSON_FIELDS.includes(s.path[parent.length]) && s.end - s.start > MAX_FREE_FORM_JSON_BYTES) {
      return {
        kind: 'size',
        path: s.path,
        message: `must be a JSON object of at most ${MAX_FREE_FORM_JSON_BYTES} bytes as sent`,
      };
    }
  }
  return null;
}

/** A dot-path for error messages: `metadata.a.0`, or `fallback` for the root. */
export function dotPath(path: JsonPath, fallback = 'body'): string {
  return path.length ? path.join('.') : fallback;
}
