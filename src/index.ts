export { build, type BuildOptions, type BuildPlan, type BuildResult } from './app/build.js';
export { VERSION } from './site/version.js';
export { CityIndex } from './core/city-index.js';
export { CityTable } from './core/city-table.js';
export { runMain, type RunOptions } from './cli/main.js';
export { COLLATIONS, type Collation } from './core/collation.js';
export { CitiesApiError, formatProblem, type Problem } from './core/errors.js';
export { CITY_FIELDS, NAME_FIELDS, type City, type NameField } from './core/fields.js';
export type { Manifest } from './site/manifest.js';
export { readManifest } from './store/manifest-file.js';
export type { SiteSettings, SiteSpec } from './site/spec.js';
export { parseOrdering, orderingKey, type Ordering, type OrderTerm } from './core/ordering.js';
export { answerListing, bodyBytes, listingUrl, type ListingAnswer } from './core/page.js';
export { paginate, pageSizeFrom, DEFAULT_PAGE_SIZE, type PageSlice } from './core/paginate.js';
export { parseQuery, type QueryPair } from './core/query-string.js';
export { readDataset } from './dataset/read-dataset.js';
export { staticPathFor } from './site/layout.js';
export { serve, type RunningServer, type ServeOptions } from './app/serve.js';
export { DEFAULT_LIMITS, MAX_TARGET_BYTES, type ServerLimits } from './http/limits.js';
export { specOf } from './site/manifest.js';
export {
  siteSpec,
  COMPRESSIONS,
  DEFAULT_BASE_URL,
  DEFAULT_COLLATION,
  DEFAULT_COMPRESSION,
  DEFAULT_PAGE_SIZES,
  type Compression,
} from './site/spec.js';
export { nginxConfig, type NginxOptions } from './hosts/nginx.js';
export { cloudFrontFunction } from './hosts/cloudfront.js';
export { netlifyHeaders, netlifyRedirects } from './hosts/netlify.js';
export { openApiDocument } from './hosts/openapi.js';
export { SAMPLE_DATASET } from './dataset/sample.js';
