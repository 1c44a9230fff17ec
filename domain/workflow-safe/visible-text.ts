// What written text may contain, so that it shows, reads and prints as what it is: the rule
// behind every "must contain a visible character" check (names, labels, tags, notes, terms,
// messages, address lines) and behind the refusal of characters that make text pass for
// something else (decision 0110). Pure: no I/O, no packages (workflow code may import it).
//
// Invisible: whitespace, control characters, format characters (zero-width space U+200B,
// joiners U+200C/U+200D, word joiner U+2060, byte-order mark U+FEFF, bidi marks, tag
// characters), other default-ignorable code points (Hangul fillers, variation selectors,
// combining grapheme joiner), combining marks without a base, lone surrogates, unassigned
// code points and the blank Braille pattern U+2800. Trimming removes only whitespace, so
// a value of zero-width characters passed every "non-blank" rule before.
//
// Refused inside text (hiddenCharacterProblem):
// - every format character, Unicode General_Category Cf (170 code points in Node 20's
//   Unicode 15.1): bidi controls U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069;
//   zero-width space U+200B; word joiner and invisible operators U+2060-U+2064; the
//   deprecated format controls U+206A-U+206F; U+FEFF; soft hyphen U+00AD; Mongolian vowel
//   separator U+180E; interlinear annotation U+FFF9-U+FFFB; tag characters U+E0001 and
//   U+E0020-U+E007F; the prepended number marks (U+0600-U+0605, U+06DD, U+070F,
//   U+0890-U+0891, U+08E2, U+110BD, U+110CD) and the hieroglyph, shorthand and musical
//   format controls (U+13430-U+1343F, U+1BCA0-U+1BCA3, U+1D173-U+1D17A). One exception:
//   the joiners U+200C and U+200D between two characters that are neither whitespace,
//   control nor format characters, where Persian, the Indic scripts and emoji sequences
//   need them;
// - control characters (Cc: U+0000-U+001F, U+007F-U+009F), except line feed, carriage
//   return and tab in text of several lines;
// - the line and paragraph separators U+2028 and U+2029 (a line feed is the line break);
// - in text of one line, every line break and tab.

export const VISIBLE_CHARACTER_MESSAGE = 'must contain a visible character';

const VISIBLE = /[^\p{White_Space}\p{Cc}\p{Cf}\p{M}\p{Default_Ignorable_Code_Point}\p{Cs}\p{Cn}\u2800]/u;

export function hasVisibleCharacter(text: string): boolean {
  return VISIBLE.test(text);
}

/** One line (names, address lines, labels, subjects) or several (notes, messages, instructions). */
export type TextLayout = 'single_line' | 'multi_line';

/** Any character that may be refused; most text has none, so the exact check runs rarely. */
const SUSPECT = /[\p{Cc}\p{Cf}\u2028\u2029]/u;
/** A neighbour a joiner may sit beside. */
const JOINABLE = /^[^\p{White_Space}\p{Cc}\p{Cf}]$/u;
const LINE_BREAKS = new Set([0x0a, 0x0d, 0x2028, 0x2029]);

/** Names of the characters most often met, for messages a person can act on. */
const NAMES: Record<number, string> = {
  0x09: 'tab',
  0x0a: 'line feed',
  0x0d: 'carriage return',
  0x85: 'next line',
  0xad: 'soft hyphen',
  0x061c: 'Arabic letter mark',
  0x180e: 'Mongolian vowel separator',
  0x200b: 'zero-width space',
  0x200c: 'zero-width non-joiner',
  0x200d: 'zero-width joiner',
  0x200e: 'left-to-right mark',
  0x200f: 'right-to-left mark',
  0x2028: 'line separator',
  0x2029: 'paragraph separator',
  0x202a: 'left-to-right embedding',
  0x202b: 'right-to-left embedding',
  0x202c: 'pop directional formatting',
  0x202d: 'left-to-right override',
  0x202e: 'right-to-left override',
  0x2060: 'word joiner',
  0x2066: 'left-to-right isolate',
  0x2067: 'right-to-left isolate',
  0x2068: 'first strong isolate',
  0x2069: 'pop directional isolate',
  0xfeff: 'zero-width no-break space (byte-order mark)',
};

/** `U+202E right-to-left override`, or `U+E0041 tag character` and the like. */
export function describeCharacter(codePoint: number): string {
  const hex = `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
  const name =
    NAMES[codePoint] ??
    (codePoint >= 0xe0000 && codePoint <= 0xe007f
      ? 'tag character'
      : codePoint < 0x20 || (codePoint >= 0x7f && codePoint <= 0x9f)
        ? 'control character'
        : 'invisible formatting character');
  return `${hex} ${name}`;
}

export interface HiddenCharacter {
  /** 1-based, counted in characters (code points), as an editor shows them. */
  position: number;
  codePoint: number;
  kind: 'line_break' | 'control' | 'format';
}

/** What the character at `i` is, when `layout` text may not contain it; null when it may. */
function hiddenAt(chars: string[], i: number, layout: TextLayout): HiddenCharacter['kind'] | null {
  const cp = chars[i].codePointAt(0)!;
  if (LINE_BREAKS.has(cp) || cp === 0x09) {
    if (layout === 'multi_line' && cp !== 0x2028 && cp !== 0x2029) return null;
    return cp === 0x09 ? 'control' : 'line_break';
  }
  if (/^\p{Cc}$/u.test(chars[i])) return 'control';
  if (/^\p{Cf}$/u.test(chars[i])) {
    const joiner = cp === 0x200c || cp === 0x200d;
    if (joiner && i > 0 && i < chars.length - 1 && JOINABLE.test(chars[i - 1]) && JOINABLE.test(chars[i + 1]))
      return null;
    return 'format';
  }
  return null;
}

/** The first character that `layout` text may not contain, or null. */
export function findHiddenCharacter(text: string, layout: TextLayout): HiddenCharacter | null {
  if (!SUSPECT.test(text)) return null;
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i++) {
    const kind = hiddenAt(chars, i, layout);
    if (kind) return { position: i + 1, codePoint: chars[i].codePointAt(0)!, kind };
  }
  return null;
}

/**
 * The text cut where the characters `layout` text may not contain are: runs to show as they
 * are, and each such character, so a page can show it as a visible mark instead (text stored
 * before these characters were refused, text from outside: OCR, receivers' answers).
 */
export function splitAtHiddenCharacters(text: string, layout: TextLayout): Array<string | HiddenCharacter> {
  if (!SUSPECT.test(text)) return [text];
  const chars = Array.from(text);
  const parts: Array<string | HiddenCharacter> = [];
  let run = '';
  for (let i = 0; i < chars.length; i++) {
    const kind = hiddenAt(chars, i, layout);
    if (!kind) {
      run += chars[i];
      continue;
    }
    if (run) parts.push(run);
    run = '';
    parts.push({ position: i + 1, codePoint: chars[i].codePointAt(0)!, kind });
  }
  if (run) parts.push(run);
  return parts;
}

/** The refusal of text holding a hidden character, in words that name it and where it is; null when the text may be used. */
export function hiddenCharacterProblem(text: string, layout: TextLayout): string | null {
  const found = findHiddenCharacter(text, layout);
  if (!found) return null;
  const what = `${describeCharacter(found.codePoint)} at character ${found.position}`;
  switch (found.kind) {
    case 'line_break':
      return layout === 'single_line'
        ? `must be a single line: line breaks are refused (${what})`
        : `must not contain ${what}: use a line feed (\\n) to start a new line`;
    case 'control':
      return `must not contain control characters (${what})`;
    case 'format':
      return `must not contain invisible formatting characters such as bidi overrides or zero-width characters (${what}): they make text read or print as something else`;
  }
}
