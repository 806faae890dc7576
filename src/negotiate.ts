import { parsePyInt } from './python-text.js';

// DRF's DefaultContentNegotiation with the reference's two renderers, JSON first, then the
// browsable API: `?format=` filters renderers (an unknown one is 404), then the Accept header
// picks, most specific media ranges first, q-values ignored, renderer order breaking ties.

export type Renderer = 'json' | 'html';

export type Negotiation =
  | { readonly renderer: Renderer; readonly indent: number | null }
  | { readonly status: 404 | 406; readonly detail: string };

const RENDERERS: readonly { name: Renderer; format: string; mediaType: MediaType }[] = [
  { name: 'json', format: 'json', mediaType: parseMediaType('application/json') },
  { name: 'html', format: 'api', mediaType: parseMediaType('text/html') },
];

export interface MediaType {
  readonly main: string;
  readonly sub: string;
  readonly params: ReadonlyMap<string, string>;
}

export function negotiate(format: string | undefined, accept: string | undefined): Negotiation {
  const renderers = format ? RENDERERS.filter((r) => r.format === format) : RENDERERS;
  if (!renderers.length) return { status: 404, detail: 'Not found.' };
  const accepted = (accept ?? '*/*').split(',').map((token) => parseMediaType(token.trim()));
  for (let precedence = 3; precedence >= 0; precedence--) {
    const group = accepted.filter((m) => precedenceOf(m) === precedence);
    for (const renderer of renderers) {
      const match = group.find((m) => matches(renderer.mediaType, m));
      if (match) return { renderer: renderer.name, indent: renderer.name === 'json' ? indentOf(match) : null };
    }
  }
  return { status: 406, detail: 'Could not satisfy the request Accept header.' };
}

/** Django's parse_header_parameters: `type/sub; key=value; key="quoted"`. */
export function parseMediaType(text: string): MediaType {
  const [type = '', ...rest] = splitParams(text);
  const params = new Map<string, string>();
  for (const part of rest) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    let value = part.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1).replaceAll('\\\\', '\\').replaceAll('\\"', '"');
    params.set(part.slice(0, eq).trim().toLowerCase(), value);
  }
  const full = type.trim().toLowerCase();
  const slash = full.indexOf('/');
  return { main: slash < 0 ? full : full.slice(0, slash), sub: slash < 0 ? '' : full.slice(slash + 1), params };
}

function splitParams(text: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '"' && text[i - 1] !== '\\') quoted = !quoted;
    else if (text[i] === ';' && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
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
