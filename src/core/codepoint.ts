/**
 * Compares strings by Unicode code point, which is also UTF-8 byte order (what SQLite's
 * binary collation does). JS `<` compares UTF-16 code units, which puts astral characters
 * (surrogate pairs, 0xD800-0xDFFF) before U+E000-U+FFFF; this corrects that.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return fixUp(x) - fixUp(y);
  }
  return a.length - b.length;
}

/** Moves surrogates above the rest of the BMP so code-unit order becomes code-point order. */
function fixUp(unit: number): number {
  if (unit >= 0xd800 && unit <= 0xdfff) return unit + 0x2000;
  if (unit >= 0xe000) return unit - 0x800;
  return unit;
}

/** True when the string has a lone surrogate (not encodable as UTF-8). */
export function hasLoneSurrogate(s: string): boolean {
  return !s.isWellFormed();
}

/** True when the string holds U+0000, refused in a name (DRF's ProhibitNullCharactersValidator): a POST and a dataset alike. */
export function hasNullCharacter(s: string): boolean {
  return s.includes('\0');
}

/** Number of code points, as Python's `len()` counts them. */
export function codePointLength(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}
