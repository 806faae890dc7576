import type { Bytes } from '../core/bytes.js';
import type { CityIndex } from '../core/city-index.js';
import { CitiesApiError } from '../core/errors.js';
import { ROUTES } from '../core/route-table.js';
import { cloudFrontFunction } from '../hosts/cloudfront.js';
import { netlifyHeaders, siteRedirects } from '../hosts/netlify.js';
import { notPrecomputedJson } from '../hosts/not-precomputed.js';
import { openApiDocument } from '../hosts/openapi.js';
import { edgeFiles } from '../site/edge-files.js';
import { holdsEveryCityPage } from '../site/layout.js';
import { allPageFiles, pageFiles, siteOrderings } from '../site/pages.js';
import { siteExtras } from '../site/extras.js';
import type { SiteSpec } from '../site/spec.js';
import { AllPageReader, type AllPageFile } from '../store/all-page-reader.js';
import type { Body } from '../fs/file-output.js';
import type { Placed, SiteEntry } from '../store/site-writer.js';

const LARGE_IN_FLIGHT = 2;

/** What the first round of a site's entries is made from: the index of the dataset, held until taken. */
export class HeldIndex {
  #index: CityIndex | undefined;

  constructor(index: CityIndex) {
    this.#index = index;
  }

  get index(): CityIndex {
    if (!this.#index) throw new CitiesApiError('internal error: the dataset was used once let go');
    return this.#index;
  }

  /** The index and the dataset file's parts, no longer held here. */
  take(): { readonly index: CityIndex; readonly dataset: Iterable<Bytes> } {
    const { index } = this;
    this.#index = undefined;
    return { index, dataset: index.table.datasetParts() };
  }
}

/**
 * A site's entries, in two rounds. First those made from the dataset itself: the edge files,
 * cities.json and each ordering's page of every city. Once those are in the new tree the dataset
 * is let go, and every other page is read back from the pages of every city (AllPageReader): a
 * 140,000-city build does not hold its 71 MB of cities while it writes its other 400,000 files.
 * A site for a host, which holds no page of every city (holdsEveryCityPage), answers its few pages from the index.
 */
export async function* siteEntries(data: HeldIndex, spec: SiteSpec, edgeTag: string): AsyncGenerator<SiteEntry> {
  const orderings = siteOrderings(spec);
  const placed: Promise<string>[] = [];
  const kept: { lengths?: Uint32Array; orders?: Uint32Array[] } = {};
  const track = (entry: SiteEntry): SiteEntry => {
    let settle: Placed = () => undefined;
    const done = new Promise<string>(
      (resolve, reject) => (settle = (outcome) => ('file' in outcome ? resolve(outcome.file) : reject(outcome.error))),
    );
    // Its failure is the writer's to report; here it only stops what waits for it.
    done.catch(() => undefined);
    placed.push(done);
    return { ...entry, placed: settle };
  };
  if (holdsEveryCityPage(spec)) {
    yield* gated(firstRound(data.take(), spec, edgeTag, kept, track), placed);
    const written = await Promise.all(placed);
    const files = new Map<string, AllPageFile>(
      orderings.map(({ key }, i) => [key, { file: written[i]!, order: kept.orders![i]! }]),
    );
    const reader = new AllPageReader(spec.count, kept.lengths!, files);
    try {
      for (const file of pageFiles(spec.count, (pairs) => reader.indexFor(pairs), spec))
        yield { ...file, compress: true };
    } finally {
      reader.close();
    }
  } else {
    // A site for a host holds no page of every city to read the others back from: they are
    // answered from the index, held meanwhile (the host's file budget keeps them few: 18,183 pages
    // at 140,000 cities for Cloudflare, where the build held the index while writing the edge data anyway).
    const { index } = data;
    yield* firstRound(data.take(), spec, edgeTag, kept, track);
    for (const file of pageFiles(spec.count, () => index, spec)) yield { ...file, compress: true };
  }
  // Every other file of the route table's list but the manifest, which the writer writes last, and
  // but those the site leaves out (site/extras.ts: other hosts' files, for a site built for one;
  // Netlify's _headers, which would misread its base path, its _redirects then only hiding files).
  // Each is made only for a site that holds it: Netlify's refuse a base path another host's site may have.
  const extras: Record<Exclude<keyof typeof ROUTES.extras, 'manifest' | 'dataset'>, () => Body> = {
    cloudfront: () => cloudFrontFunction(spec),
    netlifyRedirects: () => siteRedirects(spec),
    netlifyHeaders: () => netlifyHeaders(spec),
    openapi: () => `${JSON.stringify(openApiDocument(spec), null, 2)}\n`,
    notPrecomputed: () => notPrecomputedJson(spec.pageSizes),
  };
  const hosted = new Set<string>(siteExtras(spec));
  for (const [name, body] of Object.entries(extras))
    if (hosted.has(name)) yield { path: ROUTES.extras[name as keyof typeof extras], body: body() };
}

/**
 * The entries, a tracked one only once fewer than LARGE_IN_FLIGHT of those before it are still
 * being written (each holds buffers of its parts in flight). A generator of its own, as firstRound.
 */
async function* gated(entries: Iterable<SiteEntry>, placed: readonly Promise<string>[]): AsyncGenerator<SiteEntry> {
  for (const entry of entries) {
    if (entry.placed && placed.length > LARGE_IN_FLIGHT) await placed[placed.length - 1 - LARGE_IN_FLIGHT];
    yield entry;
  }
}

/**
 * The entries made from the dataset: the pages of every city (in siteOrderings' order) are
 * `tracked`, and what reading them back needs is `kept`. A generator of its own, so that the
 * dataset is referenced by nothing once it is done.
 */
function* firstRound(
  data: { readonly index: CityIndex; readonly dataset: Iterable<Bytes> },
  spec: SiteSpec,
  edgeTag: string,
  kept: { lengths?: Uint32Array; orders?: Uint32Array[] },
  tracked: (entry: SiteEntry) => SiteEntry,
): Generator<SiteEntry> {
  const { index, dataset } = data;
  // Read by edge functions, never sent to a client as they are: not compressed. First, so that
  // ranking the fields no page needs grows the heap before the writer threads grow, not on top.
  yield* edgeFiles(index, edgeTag, spec.fineBlockBytes);
  yield { path: ROUTES.extras.dataset, body: dataset };
  kept.lengths = index.table.jsonLengths();
  kept.orders = siteOrderings(spec).map(({ ordering }) => index.order(ordering));
  for (const { path, body } of allPageFiles(index, spec)) yield tracked({ path, body, compress: true });
}
