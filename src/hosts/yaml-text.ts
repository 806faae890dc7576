// JSON-shaped data (objects, arrays, strings, numbers, booleans) as block YAML that YAML 1.1 and
// 1.2 parsers read back as the same data: strings double-quoted with JSON's escapes (every
// non-ASCII character escaped), keys plain only where they cannot be read as anything but a
// string, multi-line ASCII text as a literal block so that code stays readable. Deterministic:
// keys in insertion order.

export type YamlValue = string | number | boolean | null | readonly YamlValue[] | { readonly [key: string]: YamlValue };

/** The YAML text of a value (a mapping or a sequence at the top), ending with a newline. */
export function yamlText(value: YamlValue): string {
  return `${lines(value, 0).join('\n')}\n`;
}

const PLAIN_KEY = /^[A-Za-z][A-Za-z0-9_.:-]*$/;
// YAML 1.1 reads these as booleans or null.
const RESERVED = /^(y|yes|n|no|true|false|on|off|null)$/i;
const BLOCK_TEXT = /^[^\s][\t\n\x20-\x7e]*$/;

function key(name: string): string {
  return PLAIN_KEY.test(name) && !name.endsWith(':') && !RESERVED.test(name) ? name : quoted(name);
}

function quoted(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `|` or `|-` and the lines of a literal block, or null when the text is better quoted. */
function block(text: string): { header: string; body: string[] } | null {
  if (!text.includes('\n') || !BLOCK_TEXT.test(text) || text.endsWith('\n\n')) return null;
  const clipped = text.endsWith('\n');
  const body = (clipped ? text.slice(0, -1) : text).split('\n');
  // A line of spaces only would be read as indentation.
  if (body.some((line) => /^ +$/.test(line))) return null;
  return { header: clipped ? '|' : '|-', body };
}

function scalar(value: string | number | boolean | null): string {
  if (typeof value === 'string') return quoted(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`YAML: ${value} is not a JSON number`);
    return String(value);
  }
  return String(value);
}

function isCollection(value: YamlValue): value is readonly YamlValue[] | { readonly [key: string]: YamlValue } {
  return typeof value === 'object' && value !== null;
}

function empty(value: YamlValue): boolean {
  return Array.isArray(value) ? value.length === 0 : Object.keys(value as object).length === 0;
}

/** The lines of a value after `prefix` (a key and its colon, or a dash) at `indent`. */
function after(prefix: string, value: YamlValue, indent: number): string[] {
  const pad = ' '.repeat(indent);
  if (!isCollection(value)) {
    const literal = typeof value === 'string' ? block(value) : null;
    if (!literal) return [`${pad}${prefix} ${scalar(value)}`];
    return [`${pad}${prefix} ${literal.header}`, ...literal.body.map((line) => (line ? `${pad}  ${line}` : ''))];
  }
  if (empty(value)) return [`${pad}${prefix} ${Array.isArray(value) ? '[]' : '{}'}`];
  if (prefix === '-') {
    // The collection's first line goes on the dash's line.
    const [first, ...rest] = lines(value, indent + 2);
    return [`${pad}- ${first!.slice(indent + 2)}`, ...rest];
  }
  return [`${pad}${prefix}`, ...lines(value, indent + 2)];
}

function lines(value: YamlValue, indent: number): string[] {
  if (!isCollection(value) || empty(value)) throw new Error('YAML: the top and every nested block is a collection');
  if (Array.isArray(value)) return value.flatMap((item: YamlValue) => after('-', item, indent));
  return Object.entries(value).flatMap(([name, item]) => after(`${key(name)}:`, item, indent));
}
