export { build, type BuildOptions, type BuildPlan, type BuildResult } from './app/build.js';
export { VERSION } from './site/version.js';
export { runMain, type RunOptions } from './cli/main.js';
export { COLLATIONS, type Collation } from './core/collation.js';
export { CitiesApiError, type Problem } from './core/errors.js';
export { CITY_FIELDS, NAME_FIELDS, type City, type NameField } from './core/fields.js';
export type { Manifest } from './site/manifest.js';
export type { SiteSettings, SiteSpec } from './site/spec.js';
export type { Ordering, OrderTerm } from './core/ordering.js';
export type { ListingAnswer } from './core/page.js';
export { DEFAULT_PAGE_SIZE, type PageSlice } from './core/paginate.js';
export type { QueryPair } from './core/query-string.js';
export { serve, type RunningServer, type ServeOptions } from './app/serve.js';
export { DEFAULT_LIMITS, MAX_TARGET_BYTES, type ServerLimits } from './http/limits.js';
export {
  COMPRESSIONS,
  DEFAULT_BASE_URL,
  DEFAULT_COLLATION,
  DEFAULT_COMPRESSION,
  DEFAULT_PAGE_SIZES,
  type Compression,
} from './site/spec.js';
export type { NginxOptions } from './hosts/nginx.js';
export { SAMPLE_DATASET } from './dataset/sample.js';
// The pure functions, each argument checked where the package is entered (app/library-entries.ts).
export {
  answerListing,
  bodyBytes,
  cloudFrontFunction,
  formatProblem,
  listingUrl,
  netlifyHeaders,
  netlifyRedirects,
  nginxConfig,
  openApiDocument,
  orderingKey,
  pageSizeFrom,
  paginate,
  parseOrdering,
  parseQuery,
  readDataset,
  readManifest,
  siteSpec,
  specOf,
  staticPathFor,
} from './app/library-entries.js';
export { CityIndex, CityTable } from './app/library-classes.js';
