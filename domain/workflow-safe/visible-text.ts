// Whether a text shows anything: the rule behind every "must contain a visible character"
// check (names, labels, tags, notes, terms, messages, address lines). Pure: no I/O.
//
// Invisible: whitespace, control characters, format characters (zero-width space U+200B,
// joiners U+200C/U+200D, word joiner U+2060, byte-order mark U+FEFF, bidi marks, tag
// characters), other default-ignorable code points (Hangul fillers, variation selectors,
// combining grapheme joiner), combining marks without a base, lone surrogates, unassigned
// code points and the blank Braille pattern U+2800. Trimming removes only whitespace, so
// a value of zero-width characters passed every "non-blank" rule before.

export const VISIBLE_CHARACTER_MESSAGE = 'must contain a visible character';

const VISIBLE = /[^\p{White_Space}\p{Cc}\p{Cf}\p{M}\p{Default_Ignorable_Code_Point}\p{Cs}\p{Cn}\u2800]/u;

export function hasVisibleCharacter(text: string): boolean {
  return VISIBLE.test(text);
}
