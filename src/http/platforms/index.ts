// What scripts/bundle-edge.mjs bundles into lib/edge/cities-api-edge.js: one adapter per platform
// (`cities-api edge <platform>` writes the entry that calls one with the site's data).
export { cloudflareWorker, type CloudflareEnv } from './cloudflare.js';
export { denoServer } from './deno.js';
export { lambdaHandler, type LambdaEvent, type LambdaResult } from './lambda.js';
export { netlifyEdgeConfig, netlifyEdgeFunction, type NetlifyContext } from './netlify.js';
export type { EdgeProjectData } from '../edge-site.js';
export type { ReadSiteFile } from '../../site/edge-source.js';
