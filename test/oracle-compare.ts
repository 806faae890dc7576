import { CityIndex } from '../src/core/city-index.js';
import type { CityTable } from '../src/core/city-table.js';
import { PRECOMPUTABLE_ORDERINGS } from '../src/core/ordering.js';
import { bodyBytes } from '../src/core/page.js';
import { route } from '../src/http/route.js';
import type { SiteContext } from '../src/http/route-types.js';
import { pyStrip } from '../src/core/python-text.js';
import { MAX_TARGET_BYTES } from '../src/http/limits.js';
import { allPageFiles, pageFiles } from '../src/site/pages.js';
import { testSpec } from './helpers.js';
import type { RecordedAnswer, ReferenceRequest } from './drf-oracle.js';

// Our side of the oracle, in-process: route() with a `codepoint` index, a site file answered with
// the bytes the build writes for it; and the comparison with the reference's recorded answer.

export interface OurSite {
  readonly site: SiteContext;
  /** Every precomputed page, by site path, as the build writes it. */
  readonly files: ReadonlyMap<string, Buffer>;
}

export interface SiteShape {
  readonly baseUrl: string;
  readonly pageSizes: readonly number[];
  readonly orderings: readonly string[] | undefined;
}

export function ourSite(table: CityTable, shape: SiteShape): OurSite {
  const index = new CityIndex(table, 'codepoint');
  const orderings = shape.orderings ?? PRECOMPUTABLE_ORDERINGS;
  const files = new Map<string, Buffer>();
  const settings = { baseUrl: shape.baseUrl, pageSizes: shape.pageSizes, orderings };
  for (const file of [...allPageFiles(index, settings), ...pageFiles(index.count, () => index, settings)])
    files.set(file.path, Buffer.from(bodyBytes(file.body)));
  return {
    site: {
      index,
      spec: testSpec({ baseUrl: shape.baseUrl, count: index.count, pageSizes: shape.pageSizes, orderings }),
    },
    files,
  };
}

const COMPARED_HEADERS = ['allow', 'content-type', 'vary', 'location'];

/** What our server sends for the request (a HEAD answer without its body). */
export function ourAnswer(req: ReferenceRequest, ours: OurSite): RecordedAnswer {
  const answer = route(req, ours.site);
  if (answer.kind === 'create') throw new Error(`the oracle sends no POST (${req.target})`);
  const body =
    answer.kind === 'static'
      ? ours.files.get(answer.file)
      : Buffer.from(bodyBytes(answer.body instanceof Uint8Array ? [answer.body] : answer.body));
  if (!body)
    throw new Error(`route() names ${answer.kind === 'static' ? answer.file : ''}, which the build does not write`);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(answer.headers))
    if (COMPARED_HEADERS.includes(name.toLowerCase())) headers[name.toLowerCase()] = value;
  return {
    status: answer.kind === 'static' ? 200 : answer.status,
    headers,
    body: req.method === 'HEAD' ? Buffer.alloc(0) : body,
  };
}

/** A difference the test accepts, with why and exactly when. */
interface Justification {
  readonly name: string;
  readonly why: string;
  readonly applies: (req: ReferenceRequest, ours: RecordedAnswer, theirs: RecordedAnswer) => boolean;
}

const sameHead = (a: RecordedAnswer, b: RecordedAnswer) =>
  a.status === b.status && JSON.stringify(sortedKeys(a.headers)) === JSON.stringify(sortedKeys(b.headers));
const sortedKeys = (h: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(h).sort(([a], [b]) => COMPARED_HEADERS.indexOf(a) - COMPARED_HEADERS.indexOf(b)));

export const JUSTIFIED: readonly Justification[] = [
  {
    name: 'browsable page body',
    why: "DRF's page is its Django template (bootstrap, forms, session links); ours is a light page of the same answer: status and headers must match (the kit's `status` level)",
    applies: (_req, ours, theirs) =>
      theirs.headers['content-type'] === 'text/html; charset=utf-8' &&
      'allow' in theirs.headers &&
      sameHead(ours, theirs),
  },
  {
    name: 'OPTIONS labels and extra keys',
    why: "the kit's `metadata` level: same fields with the same type, required and read_only; ours also states the limits it enforces (min/max, digits)",
    applies: (req, ours, theirs) =>
      req.method === 'OPTIONS' &&
      theirs.status === 200 &&
      sameHead(ours, theirs) &&
      sameMetadata(ours.body, theirs.body),
  },
  {
    name: 'DRF fails on non-ASCII media types',
    why: "DRF 3.14's parse_header shim on Django 3.2 decodes a media type's type and parameter names as ASCII: a Latin-1 byte there (`application/jsoné`, `;\\xa0indent=4`) raises UnicodeDecodeError, a 500; we answer the request instead",
    applies: (req, _ours, theirs) => theirs.status === 500 && nonAsciiMediaName(req.accept ?? ''),
  },
  {
    name: 'request target too long',
    why: `a request line longer than ${MAX_TARGET_BYTES} bytes is refused (414) as nginx's default buffers do; Django has no such limit`,
    applies: (req, ours) => req.target.length > MAX_TARGET_BYTES && ours.status === 414,
  },
];

/** Whether an Accept header has non-ASCII text outside parameter values (in a type or a parameter name). */
function nonAsciiMediaName(accept: string): boolean {
  const nonAscii = (s: string) => /[^\x00-\x7f]/.test(s);
  return accept.split(',').some((token) => {
    const [type = '', ...params] = pyStrip(token).split(';');
    return nonAscii(type) || params.some((p) => p.includes('=') && nonAscii(p.slice(0, p.indexOf('='))));
  });
}

function sameMetadata(ours: Buffer, theirs: Buffer): boolean {
  const shape = (body: Buffer) => {
    const { actions, ...rest } = JSON.parse(body.toString()) as {
      actions: { POST: Record<string, { type: string; required: boolean; read_only: boolean }> };
    };
    const fields = Object.entries(actions.POST).map(([name, f]) => [name, f.type, f.required, f.read_only]);
    return JSON.stringify([rest, fields]);
  };
  return shape(ours) === shape(theirs);
}

export type Verdict =
  | { readonly equal: true; readonly justified?: string }
  /** `kind` groups differences of one class (`status 200/404`, `content-type`, `body`); `what` says it all. */
  | { readonly equal: false; readonly kind: string; readonly what: string };

export function compareAnswers(req: ReferenceRequest, ours: RecordedAnswer, theirs: RecordedAnswer): Verdict {
  const header = COMPARED_HEADERS.find((h) => ours.headers[h] !== theirs.headers[h]);
  const kind =
    ours.status !== theirs.status
      ? `status ${ours.status}, DRF ${theirs.status}`
      : header
        ? `${header}${header === 'location' ? '' : `: ${ours.headers[header]}, DRF ${theirs.headers[header]}`}`
        : !ours.body.equals(theirs.body)
          ? `${theirs.headers['content-type']} body`
          : null;
  if (kind === null) return { equal: true };
  const justified = JUSTIFIED.find((j) => j.applies(req, ours, theirs));
  if (justified) return { equal: true, justified: justified.name };
  const body = ours.body.equals(theirs.body) ? '' : `; body ${firstDifference(ours.body, theirs.body)}`;
  return {
    equal: false,
    kind,
    what: `status ${ours.status} (DRF ${theirs.status}); headers ${JSON.stringify(ours.headers)} (DRF ${JSON.stringify(theirs.headers)})${body}`,
  };
}

/** Where two bodies part, with a little context from each. */
function firstDifference(a: Buffer, b: Buffer): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const around = (x: Buffer) => JSON.stringify(x.subarray(Math.max(0, i - 40), i + 60).toString());
  return `at byte ${i}: ours ${around(a)} DRF ${around(b)}`;
}
