import { parsePyInt, pyBytesStrip, pyStrip } from './python-text.js';
import { unquote } from './query-string.js';
import { ROUTES } from './route-table.js';

// DRF's DefaultContentNegotiation with the reference's two renderers, JSON first, then the
// browsable API: `?format=` filters renderers (an unknown one is 404), then the Accept header
// picks, most specific media ranges first, q-values ignored, renderer order breaking ties.

export type Renderer = 'json' | 'html';

export type Negotiation =
  | { readonly renderer: Renderer; readonly indent: number | null }
  | { readonly status: 404 | 406; readonly detail: string };

/** Shared by every media type without parameters (declared before RENDERERS parses theirs). */
const NO_PARAMS: ReadonlyMap<string, string> = new Map();

const RENDERERS: readonly { name: Renderer; format: string; mediaType: MediaType }[] = [
  { name: 'json', format: ROUTES.format.json, mediaType: parseMediaType(ROUTES.mediaType.json) },
  { name: 'html', format: ROUTES.format.html, mediaType: parseMediaType(ROUTES.mediaType.html) },
];

export interface MediaType {
  readonly main: string;
  readonly sub: string;
  readonly params: ReadonlyMap<string, string>;
}

export function negotiate(format: string | undefined, accept: string | undefined): Negotiation {
  const renderers = format ? RENDERERS.filter((r) => r.format === format) : RENDERERS;
  if (!renderers.length) return { status: 404, detail: 'Not found.' };
  // get_accept_list: str.strip() of each comma-separated token (Unicode whitespace, U+001C-U+001F too).
  // A set, as DRF groups them: a token given twice is parsed once.
  const accepted = [...new Set((accept ?? '*/*').split(',').map(pyStrip))].map(parseMediaType);
  for (let precedence = 3; precedence >= 0; precedence--) {
    const group = accepted.filter((m) => precedenceOf(m) === precedence);
    for (const renderer of renderers) {
      const match = group.find((m) => matches(renderer.mediaType, m));
      if (match)
        return {
          renderer: renderer.name,
          indent: renderer.name === 'json' ? indentOf(forRenderer(renderer.mediaType, match)) : null,
        };
    }
  }
  return { status: 406, detail: 'Could not satisfy the request Accept header.' };
}

/**
 * The media type DRF hands the renderer: the client's own, or, when the client's is less specific
 * (`*\/*; indent=2`), the renderer's type with the client's parameters joined on (`key=value;...`),
 * which get_indent then parses again.
 */
function forRenderer(renderer: MediaType, match: MediaType): MediaType {
  if (precedenceOf(renderer) <= precedenceOf(match)) return match;
  return parseMediaType(
    [`${renderer.main}/${renderer.sub}`, ...[...match.params].map(([k, v]) => `${k}=${v}`)].join(';'),
  );
}

/**
 * Django 3.2's parse_header (through DRF's parse_header_parameters): `type/sub; key=value;
 * key="quoted"`, parts split on `;` outside an even count of quotes, ASCII whitespace stripped,
 * names lower-cased, the last of a repeated name kept, `name*=charset'lang'value` decoded.
 * (Non-ASCII in a type or a parameter name makes DRF fail with a 500; here it is just text.)
 */
export function parseMediaType(text: string): MediaType {
  const [type = '', ...rest] = text.includes(';') ? splitParams(text) : [pyBytesStrip(text)];
  const params = rest.length ? new Map<string, string>() : NO_PARAMS;
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    let name = asciiLower(pyBytesStrip(part.slice(0, eq)));
    let value = pyBytesStrip(part.slice(eq + 1));
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"'))
      value = value.slice(1, -1).replaceAll('\\\\', '\\').replaceAll('\\"', '"');
    if (name.endsWith('*')) {
      name = name.slice(0, -1);
      if (part.split("'").length === 3) {
        const pieces = value.split("'");
        if (pieces.length !== 3) continue;
        value = unquote(pieces[2]!);
      }
    }
    (params as Map<string, string>).set(name, value);
  }
  const full = asciiLower(type);
  const slash = full.indexOf('/');
  return { main: slash < 0 ? full : full.slice(0, slash), sub: slash < 0 ? '' : full.slice(slash + 1), params };
}

function asciiLower(s: string): string {
  return /[A-Z]/.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s;
}

/**
 * Django's _parse_header_params: a `;` ends a part unless the part so far holds an odd number of
 * quotes (escaped ones count too). Quotes are counted once each, not again per `;` as Django does.
 */
function splitParams(text: string): string[] {
  const parts: string[] = [];
  let quote = text.indexOf('"');
  for (let start = 0; ; ) {
    let end = text.indexOf(';', start);
    for (let quotes = 0; end > start; end = text.indexOf(';', end + 1)) {
      for (; quote >= 0 && quote < end; quote = text.indexOf('"', quote + 1)) quotes++;
      if (quotes % 2 === 0) break;
    }
    if (end < 0) end = text.length;
    parts.push(pyBytesStrip(text.slice(start, end)));
    if (end === text.length) return parts;
    start = end + 1;
  }
}

function precedenceOf(m: MediaType): number {
  if (m.main === '*') return 0;
  if (m.sub === '*') return 1;
  return m.params.size === 0 || (m.params.size === 1 && m.params.has('q')) ? 2 : 3;
}

/** DRF's media_type_matches: whether `accepted` (an Accept range, or a request's Content-Type) is served by `renderer` (or a parser). */
export function matches(renderer: MediaType, accepted: MediaType): boolean {
  if (renderer.sub !== '*' && accepted.sub !== '*' && accepted.sub !== renderer.sub) return false;
  return renderer.main === '*' || accepted.main === '*' || accepted.main === renderer.main;
}

/** JSONRenderer's `indent` media type parameter: an integer clamped to 0-8, 0 meaning none. */
function indentOf(m: MediaType): number | null {
  const text = m.params.get('indent');
  const value = text === undefined ? null : parsePyInt(text);
  if (value === null) return null;
  const clamped = Number(value < 0n ? 0n : value > 8n ? 8n : value);
  return clamped || null;
}
