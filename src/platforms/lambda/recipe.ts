import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CitiesApiError } from '../../core/errors.js';
import { ROUTES } from '../../core/route-table.js';
import type { PlatformLimit } from '../limits.js';
import { BUNDLE_NAME, DATA_NAME, entryModule, posixRelative, textFile, type EdgeRecipe } from '../recipe.js';
import { SIX_MB_PAGE_CITIES } from '../response-limit.js';
import { LAMBDA_STREAM_BYTES, LAMBDA_STREAM_PAGE_CITIES } from './streaming.js';
import { zipArchive } from './zip-file.js';

// `cities-api edge lambda`: function.zip (ours) holds the entry (the user's index.mjs, as it stands),
// the bundle, the site's settings, and the site's edge files at their site paths beside them.

const ENTRY = 'index.mjs';
const QUOTAS_PAGE = 'AWS Lambda Developer Guide, "Lambda quotas" page';
const MiB = 1024 * 1024;
const UPDATE = 'aws lambda update-function-code --function-name cities-api';
const DIRECT = `${UPDATE} --zip-file fileb://function.zip`;
/** Through a bucket of the user's (BUCKET, to replace), as Lambda takes a package over the direct upload's limit. */
const FROM_S3 = `aws s3 cp function.zip s3://BUCKET/function.zip && ${UPDATE} --s3-bucket BUCKET --s3-key function.zip`;

export const LAMBDA_LIMITS: readonly PlatformLimit[] = [
  {
    what: 'deployment package, unzipped',
    figure: 262_144_000,
    unit: 'bytes',
    measure: 'packageBytes',
    source: QUOTAS_PAGE,
    advice:
      'the edge data is most of it and grows with each ordering: build the site with fewer --orderings, or answer from Cloudflare or Netlify (edge cloudflare, edge netlify), which read the edge data from the CDN rather than from the function',
  },
  {
    what: 'deployment package, zipped, uploaded directly',
    figure: 50 * MiB,
    unit: 'bytes',
    measure: 'zipBytes',
    adapts: true,
    source: QUOTAS_PAGE,
    advice: `over it, edge lambda prints the deploy command through an S3 bucket of yours: ${FROM_S3}`,
  },
  {
    what: 'response of a synchronous invocation',
    figure: 6 * MiB,
    unit: 'bytes',
    source: QUOTAS_PAGE,
    advice: `a page is capped at ${SIX_MB_PAGE_CITIES.toLocaleString('en-US')} cities, and an answer still over it (headers and base64 counted) is a 500 saying to ask for a smaller page_size`,
  },
  {
    what: 'response streamed (a function URL in RESPONSE_STREAM mode)',
    figure: LAMBDA_STREAM_BYTES,
    unit: 'bytes',
    source: 'AWS Lambda Developer Guide, "Response streaming for Lambda functions"',
    advice: `index.streamingHandler streams a page of up to ${LAMBDA_STREAM_PAGE_CITIES.toLocaleString('en-US')} cities; a larger one is a 500 saying to ask for a smaller page_size`,
  },
  {
    what: "function's memory (128 MB by default)",
    figure: 10_240 * MiB,
    unit: 'bytes',
    source: QUOTAS_PAGE,
    advice: 'give the function 256 MB or more: an environment keeps the rank files it read and up to 24 MB of chunks',
  },
];

export const lambdaRecipe: EdgeRecipe = {
  platform: 'lambda',
  title: 'AWS Lambda',
  limits: LAMBDA_LIMITS,
  doc: 'docs/lambda.md',
  async project({ site, out, bundle, code, limit, check }) {
    const { files } = code(out);
    const main = entryModule(
      'lambdaHandler, lambdaStreamingHandler',
      [
        'const read = (path) => readFile(new URL(path, import.meta.url));\n',
        '// API Gateway, or a function URL in BUFFERED mode (a page up to 6 MB): the handler index.handler.',
        'export const handler = lambdaHandler(site, read);',
        '// A function URL with InvokeMode RESPONSE_STREAM (a page up to 200 MB): the handler index.streamingHandler.',
        'export const streamingHandler = lambdaStreamingHandler(site, read);\n',
      ].join('\n'),
      '',
      "import { readFile } from 'node:fs/promises';\n",
    );
    const entry = textFile(join(out, ENTRY), main);
    const own = [
      { name: ENTRY, bytes: await readFile(entry.path).catch(() => entry.bytes) },
      { name: BUNDLE_NAME, bytes: bundle },
      { name: DATA_NAME, bytes: files.find((f) => f.path.endsWith(DATA_NAME))!.bytes },
    ];
    // The site's files zipped at their site paths: the edge data, and openapi.json (answered at /openapi.json, as the static hosts answer it).
    const names = [...(await edgeDataNames(site)), ROUTES.extras.openapi];
    const sizes = await Promise.all(names.map(async (name) => (await stat(join(site, name))).size));
    // Before anything is read: the package unzipped is the files' bytes.
    check({ packageBytes: { value: [...own.map((f) => f.bytes.length), ...sizes].reduce((a, b) => a + b, 0) } });
    const zip = zipArchive([
      ...own,
      ...(await Promise.all(names.map(async (name) => ({ name, bytes: await readFile(join(site, name)) })))),
    ]);

    return {
      ours: [...files, { path: join(out, 'function.zip'), bytes: zip }],
      theirs: [entry],
      deploy: zip.length > limit('zipBytes') ? FROM_S3 : DIRECT,
    };
  },
};

/** The site's edge files (all of `_cities-api/edge/`), their site paths sorted. */
async function edgeDataNames(site: string): Promise<string[]> {
  const dir = join(site, ROUTES.edge.dir);
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => {
    throw new CitiesApiError(
      `${dir} is missing: rebuild the site with this version of cities-api (it writes the edge data)`,
      1,
    );
  });
  return entries
    .filter((e) => e.isFile())
    .map((e) => posixRelative(site, join(e.parentPath, e.name)).replace(/^\.\//, ''))
    .sort();
}
