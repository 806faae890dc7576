import { NAME_FIELDS } from './fields.js';

// The route table: the one place that says what the API's URL space is and where a built site
// keeps each precomputed answer. The server's route(), the page function, the static build, every
// host's config (nginx, CloudFront, Netlify), the OpenAPI document and the edge handler read it;
// none of them restates a parameter's spelling, a path or a header.

/** Django's default security headers (SecurityMiddleware, XFrameOptionsMiddleware): on every answer. */
const DJANGO_HEADERS = {
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Cross-Origin-Opener-Policy': 'same-origin',
} as const;

const ALLOW = 'GET, POST, HEAD, OPTIONS';
/** The media types of the two renderers (compact or indented JSON, the browsable page) and of the POST bodies DRF parses. */
const MEDIA = {
  json: 'application/json',
  html: 'text/html',
  form: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data',
} as const;

export const ROUTES = {
  /** The endpoint, below the base URL's path; without its last slash it redirects there (301). */
  endpoint: '/cities/',
  /** Query parameters the endpoint reads. */
  param: { format: 'format', ordering: 'ordering', page: 'page', pageSize: 'page_size' },
  /** `format` values: compact JSON, and the browsable HTML page. */
  format: { json: 'json', html: 'api' },
  /** The `page` value of the last page. */
  lastPage: 'last',
  /** What makes an ordering term descending. */
  descending: '-',
  /** The fields `ordering` accepts; other names are dropped, as DRF's OrderingFilter does. */
  orderingFields: NAME_FIELDS,
  /** Path segment of a file for a parameter the request does not give. */
  absent: 'default',
  /** A site's files, relative to its root: `{name}` is a parameter's canonical spelling. */
  file: {
    dir: 'cities',
    page: 'cities/{ordering}/{page_size}/{page}.json',
    /**
     * Any page_size >= the number of cities, on page 1 (or none, or last): the one page of all
     * cities, whose links are null. The count is in the name, so a host config holding a count
     * that a rebuild changed finds no file, and sends the query to the live side.
     */
    all: 'cities/{ordering}/all-{count}.json',
    /** What the site keeps for itself (manifest, dataset, host configs): never an answer. */
    meta: '_cities-api',
  },
  /**
   * What an edge function answers any live query from, reading only what a request needs: no
   * whole dataset, no collation at run time (site/edge-files.ts writes them, site/edge-source.ts reads them).
   */
  edge: {
    /** The folder of them all (an edge function's platform ships or serves it with the function). */
    dir: '_cities-api/edge',
    /** The number of cities, distinct values per field, the data's tag, each layout's blocks. */
    index: '_cities-api/edge/index.json',
    /** Per name field (and `default`): dataset positions in the collation's ascending order. */
    ranks: '_cities-api/edge/ranks/{ordering}.bin',
    /** The serialized cities in one ordering's order (`default` or a field ascending), in blocks of at most BLOCK_BYTES. */
    block: '_cities-api/edge/rows/{layout}-{block}.bin',
  },
  /** Every file of a site besides its pages. */
  extras: {
    manifest: '_cities-api/manifest.json',
    /** The validated dataset, which the live side loads. */
    dataset: '_cities-api/cities.json',
    /** The CloudFront Function for this build (viewer-request), published by the deploy. */
    cloudfront: '_cities-api/cloudfront-function.js',
    netlifyRedirects: '_redirects',
    netlifyHeaders: '_headers',
    openapi: 'openapi.json',
    /** The honest 404 of a static host without a live side. */
    notPrecomputed: 'cities/not-precomputed.json',
  },
  /**
   * What `serve` answers besides the reference (which answers Django's 404 there), unless
   * `--no-preview-pages`: a page linking the API, and the site's OpenAPI document at `/{extras.openapi}`.
   */
  preview: { index: '/' },
  /** Answers a file can give: to these methods, */
  fileMethods: ['GET', 'HEAD'],
  /**
   * and to Accept headers (none counts as any) whose ranges are plain ASCII without parameters,
   * none of them one the browsable renderer takes, and one of them one the JSON renderer takes.
   */
  accept: {
    json: ['*/*', '*/json', 'application/*', 'application/json'],
    html: ['text/html', 'text/*', '*/html'],
  },
  /** Headers on every answer of the endpoint; Django's own pages carry only `djangoHeaders`. */
  headers: { Allow: ALLOW, Vary: 'Accept', 'Access-Control-Allow-Origin': '*', ...DJANGO_HEADERS },
  djangoHeaders: DJANGO_HEADERS,
  mediaType: MEDIA,
  contentType: {
    json: MEDIA.json,
    html: `${MEDIA.html}; charset=utf-8`,
    /** Django 3.2's default error pages carry no charset. */
    djangoPage: MEDIA.html,
  },
  /** Header names the answers carry besides `headers`. */
  header: {
    allow: 'Allow',
    contentType: 'Content-Type',
    vary: 'Vary',
    location: 'Location',
    retryAfter: 'Retry-After',
    authenticate: 'WWW-Authenticate',
    allowMethods: 'Access-Control-Allow-Methods',
    allowHeaders: 'Access-Control-Allow-Headers',
    maxAge: 'Access-Control-Max-Age',
    contentLength: 'Content-Length',
    cacheControl: 'Cache-Control',
    /** Netlify's CDN only (stripped before the client): keeps an edge function's answer (src/platforms/netlify/adapter.ts). */
    netlifyCdnCacheControl: 'Netlify-CDN-Cache-Control',
    etag: 'ETag',
    ifNoneMatch: 'If-None-Match',
    accept: 'Accept',
    /** A CORS preflight's request headers. */
    requestMethod: 'Access-Control-Request-Method',
    requestHeaders: 'Access-Control-Request-Headers',
  },
  /** What one request may hold: the target (path and query), query fields (Django's DATA_UPLOAD_MAX_NUMBER_FIELDS), a POST body. */
  limits: { targetBytes: 8 * 1024, fields: 1000, bodyBytes: 64 * 1024 },
} as const;

export type FileParam = 'ordering' | 'page_size' | 'page' | 'count' | 'layout' | 'block';

/** A file template with its `{name}` placeholders replaced: `fill(ROUTES.file.page, { ordering: '$1', ... })`. */
export function fill(template: string, values: Partial<Record<FileParam, string | number>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: FileParam) =>
    values[name] === undefined ? whole : String(values[name]),
  );
}

/** The endpoint's path below a mount (the base URL's path): `/cities/` or `/api/v1/cities/`. */
export function endpointPath(mount: string): string {
  return `${mount}${ROUTES.endpoint}`;
}
