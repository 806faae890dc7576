import type { City } from '../core/fields.js';
import { cityJson } from '../core/json-text.js';

// How a JSON dataset writes its elements, read from its end, so that the cities appended to it
// (appended-text.ts) are written as its own: its line ends, its elements' indentation, and each
// element on one line or pretty-printed (a field a line, as JSON.stringify(cities, null, 2) writes).

export interface JsonStyle {
  readonly eol: '\n' | '\r\n';
  /** The whitespace an element's line starts with. */
  readonly indent: string;
  /** Where elements are pretty-printed: the whitespace a field's line starts with, and what follows a key (`:` or `: `). */
  readonly fields?: { readonly indent: string; readonly colon: string };
}

/**
 * The style of a JSON dataset: the line end nearest before its closing bracket (else its first,
 * in `head`, the file's first bytes; else LF), and the whitespace that starts the line its last
 * element ends on (two spaces where that is the bracket's line, the array is empty, or the line
 * starts before `tail`); pretty-printed where that line is the element's closing brace alone and
 * the line before it a field's, further indented. `tail` is the file's bytes from `start`; `last`,
 * where its last element ends in it (-1: none); `end`, its bracket (-1: none).
 */
export async function jsonStyle(
  tail: Buffer,
  start: number,
  last: number,
  end: number,
  head: () => Promise<Buffer>,
): Promise<JsonStyle> {
  let lines = end < 0 ? tail : tail.subarray(0, end);
  let lf = lines.lastIndexOf(0x0a);
  if (lf < 0) {
    lines = await head();
    lf = lines.indexOf(0x0a);
  }
  const eol = lf > 0 && lines[lf - 1] === 0x0d ? '\r\n' : '\n';
  const from = last > 0 ? tail.lastIndexOf(0x0a, last - 1) + 1 : -1;
  if (from < 0 || (from === 0 && start > 0)) return { eol, indent: '  ' };
  let at = from;
  while (tail[at] === 0x20 || tail[at] === 0x09) at++;
  if (tail[at] === 0x5b) return { eol, indent: '  ' };
  const indent = tail.toString('latin1', from, at);
  // The element's closing brace alone on its line: the line before it is its last field's, if it is pretty-printed.
  const before = from >= 2 ? tail.lastIndexOf(0x0a, from - 2) + 1 : -1;
  if (at !== last - 1 || tail[at] !== 0x7d || before < 0 || (before === 0 && start > 0)) return { eol, indent };
  const field = /^([ \t]*)"[^"\\]*":( *)/.exec(tail.toString('latin1', before, from - 1));
  const deeper = field && field[1]!.length > indent.length && field[1]!.startsWith(indent);
  return deeper ? { eol, indent, fields: { indent: field[1]!, colon: `:${field[2]}` } } : { eol, indent };
}

/** A city as an element of a dataset of that style: its JSON as the reference writes it, laid out as the file's. */
export function jsonElement(city: City, { eol, indent, fields }: JsonStyle): string {
  const json = cityJson(city);
  if (!fields) return `${indent}${json}`;
  // Each member's key ends at its first `":` (a field's name holds no quote).
  const members = membersOf(json).map((member) => `${fields.indent}${member.replace('":', `"${fields.colon}`)}`);
  return `${indent}{${eol}${members.join(`,${eol}`)}${eol}${indent}}`;
}

/** The members of a flat JSON object's text (`"key":value`), split at the commas outside its strings. */
function membersOf(json: string): string[] {
  const members: string[] = [];
  let from = 1;
  let inString = false;
  for (let i = 1; i < json.length - 1; i++) {
    const c = json[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === ',') {
      members.push(json.slice(from, i));
      from = i + 1;
    }
  }
  members.push(json.slice(from, json.length - 1));
  return members;
}
