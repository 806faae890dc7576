import { CitiesApiError, formatProblem as problemText } from '../core/errors.js';
import { orderingKey as keyOf, parseOrdering as orderingOf } from '../core/ordering.js';
import { answerListing as pageAnswer, bodyBytes as joined, listingUrl as urlOf } from '../core/page.js';
import { paginate as slice, pageSizeFrom as sizeOf } from '../core/paginate.js';
import { parseQuery as pairsOf } from '../core/query-string.js';
import { readDataset as readCities, type ReadOptions } from '../dataset/read-dataset.js';
import { cloudFrontFunction as cloudFront } from '../hosts/cloudfront.js';
import { netlifyHeaders as headers, netlifyRedirects as redirects } from '../hosts/netlify.js';
import { nginxConfig as nginx } from '../hosts/nginx.js';
import { openApiDocument as openApi } from '../hosts/openapi.js';
import { staticPathFor as pathOf } from '../site/layout.js';
import { specOf as specOfManifest } from '../site/manifest.js';
import { normalizeBaseUrl, siteSpec as specOfSettings } from '../site/spec.js';
import { readManifest as manifestOf } from '../store/manifest-file.js';
import * as is from './argument-kinds.js';
import { reasonOf } from './caller-callbacks.js';
import { checkedOptions, inCallerNames, inLibraryWords } from './library-options.js';

// The package's pure exports (src/index.ts) as a JavaScript caller may call them: each argument
// checked by its kind before the function runs, so that a wrong one is a CitiesApiError naming it
// and saying what it must be, never a TypeError from deep inside, a hang or a wrong answer (an
// object with a getter that throws is one too). Only these wrappers check: the server, the build
// and the edge call the functions themselves, per request, without them.

type Fn = (...args: never[]) => unknown;

/** `fn` as `name` is exported: its arguments checked by `kinds` (in order), any error it throws or rejects with a CitiesApiError. */
function entry<F extends Fn>(name: string, kinds: Record<string, is.Kind>, fn: F): F {
  const checked = (...args: unknown[]) => {
    checkArguments(name, kinds, args);
    try {
      const result = (fn as unknown as (...values: unknown[]) => unknown)(...args);
      return result instanceof Promise ? result.catch((error: unknown) => Promise.reject(ours(name, error))) : result;
    } catch (error) {
      throw ours(name, error);
    }
  };
  return checked as unknown as F;
}

/** Each argument checked by its kind, in order: the first refused a CitiesApiError naming it (a getter that throws too). */
export function checkArguments(name: string, kinds: Record<string, is.Kind>, args: readonly unknown[]): void {
  let refusal: CitiesApiError | undefined;
  try {
    Object.entries(kinds).find(
      ([arg, kind], i) => (refusal = is.refused(`${name}()'s argument \`${arg}\``, args[i], kind)),
    );
  } catch (error) {
    throw ours(name, error);
  }
  if (refusal) throw refusal;
}

/** entry() of an async function: a wrong argument is a rejection too, as its other failures are. */
function asyncEntry<A extends unknown[], R>(
  name: string,
  kinds: Record<string, is.Kind>,
  fn: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  const checked = entry(name, kinds, fn);
  return async (...args) => checked(...args);
}

/** An error as the library throws it: ours naming options as `name` does, another (a caller's getter that threw) said as a CitiesApiError. */
function ours(name: string, error: unknown): CitiesApiError {
  if (error instanceof CitiesApiError) return inLibraryWords(name, error) as CitiesApiError;
  return new CitiesApiError(`${name}() could not read its arguments: ${reasonOf(error)}`, 2, [], { cause: error });
}

const pairs: is.Kind = (v) =>
  Array.isArray(v) &&
  v.every((pair) => Array.isArray(pair) && pair.length === 2 && pair.every((x) => typeof x === 'string'))
    ? undefined
    : "an array of [name, value] string pairs, as parseQuery('page=2') gives";
const query: is.Kind = (v) => (typeof v === 'string' ? undefined : "a query string, e.g. 'ordering=name_en&page=2'");
const index = is.fieldsOf('a CityIndex (new CityIndex(await readDataset(file)))', {
  count: is.cityCount,
  positions: is.callback,
  json: is.callback,
});
const ordering: is.Kind = (v) =>
  Array.isArray(v) &&
  v.every((t) => !is.plainObject(t) && typeof t.field === 'string' && typeof t.descending === 'boolean')
    ? undefined
    : "an Ordering, as parseOrdering('name_en,-name_ar') gives";
const pageSize: is.Kind = (v) =>
  (typeof v === 'bigint' && v > 0n) || !positive(v) ? undefined : 'a page size, a whole number 1 or more';
const param = is.optional(is.string);
const positive = is.whole('a page size, a whole number 1 or more', 1);
const body: is.Kind = (v) =>
  Array.isArray(v) && v.every((part) => part instanceof Uint8Array)
    ? undefined
    : "an answer's body (answerListing()'s)";
const layout = is.fieldsOf('a SiteSpec (specOf(manifest))', {
  count: is.cityCount,
  pageSizes: is.SETTINGS_FIELDS.pageSizes!,
  orderings: is.SETTINGS_FIELDS.orderings!,
  firstPages: is.SETTINGS_FIELDS.firstPages!,
});
const READ_OPTIONS: Record<string, is.Kind> = {
  onProgress: is.callback,
  signal: is.signal,
  onDigest: is.callback,
  shownAs: is.string,
  strict: is.boolean,
  onWarning: is.callback,
};

/** readDataset()'s options checked, the warnings it gives naming options as readDataset() does. */
const readOptionsOf = (options: ReadOptions) =>
  inCallerNames('readDataset', checkedOptions('readDataset', options, READ_OPTIONS, 'ReadOptions')) as ReadOptions;

export const answerListing = entry(
  'answerListing',
  { index, pairs, baseUrl: is.url },
  (pageIndex: Parameters<typeof pageAnswer>[0], asked: Parameters<typeof pageAnswer>[1], baseUrl: string) =>
    pageAnswer(pageIndex, asked, normalizeBaseUrl(baseUrl)),
);
export const bodyBytes = entry('bodyBytes', { body }, joined);
export const listingUrl = entry('listingUrl', { baseUrl: is.url, query }, (baseUrl: string, text: string) =>
  urlOf(normalizeBaseUrl(baseUrl), text),
);
export const paginate = entry('paginate', { count: is.cityCount, pageSize, pageParam: param }, slice);
export const pageSizeFrom = entry('pageSizeFrom', { param, defaultSize: is.optional(positive) }, sizeOf);
export const parseOrdering = entry('parseOrdering', { param }, orderingOf);
export const orderingKey = entry('orderingKey', { ordering }, keyOf);
// The query only: pairsOf's other parameters read a part of a request target (serve's), and a
// caller's extra arguments (Array#map's index and array) made it read none of the query.
export const parseQuery = entry('parseQuery', { qs: query }, (qs: string) => pairsOf(qs));
export const staticPathFor = entry('staticPathFor', { pairs, layout }, pathOf);
export const specOf = entry('specOf', { manifest: is.manifest }, specOfManifest);
export const siteSpec = entry('siteSpec', { settings: is.settings, count: is.cityCount }, specOfSettings);
export const nginxConfig = entry(
  'nginxConfig',
  { spec: is.spec, options: is.fieldsOf('an object', { liveUrl: is.url, site: is.optional(is.string) }) },
  nginx,
);
export const cloudFrontFunction = entry(
  'cloudFrontFunction',
  { spec: is.spec, liveDomain: is.optional(is.string) },
  cloudFront,
);
export const netlifyHeaders = entry('netlifyHeaders', { spec: is.spec }, headers);
export const netlifyRedirects = entry('netlifyRedirects', { spec: is.spec }, redirects);
export const openApiDocument = entry('openApiDocument', { spec: is.spec }, openApi);
export const readManifest = asyncEntry('readManifest', { siteDir: is.string }, manifestOf);
export const readDataset = asyncEntry(
  'readDataset',
  { file: is.string, options: is.optional(is.plainObject) },
  (file: string, options?: ReadOptions) => readCities(file, options && readOptionsOf(options)),
);
export const formatProblem = entry(
  'formatProblem',
  { problem: is.fieldsOf('a Problem', { reason: is.string }) },
  problemText,
);
