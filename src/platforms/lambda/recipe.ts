import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PlatformLimit } from '../limits.js';
import { BUNDLE_NAME, DATA_NAME, entryModule, textFile, type EdgeRecipe } from '../recipe.js';
import { SIX_MB_PAGE_CITIES } from '../response-limit.js';
import { packageBytes, packageFiles } from './package-files.js';
import { LAMBDA_STREAM_BYTES, LAMBDA_STREAM_PAGE_CITIES } from './streaming.js';
import { zipArchive } from './zip-file.js';

// `cities-api edge lambda`: function.zip (ours) holds the entry (the user's index.mjs, as it stands),
// the bundle, the site's settings, and at their site paths the site's files the function reads
// (package-files.ts: the edge index, the rank files, one layout of the cities, openapi.json).

const ENTRY = 'index.mjs';
/** The entry written when missing: the handlers read the package's files, held open and read by position. */
const ENTRY_MODULE = entryModule(
  'lambdaHandler, lambdaStreamingHandler',
  [
    'const file = (path) => new URL(path, import.meta.url);',
    'const read = (path) => readFile(file(path));',
    "// The package's edge files held open and read by position: a page reads its cities' bytes, not whole blocks.",
    'const openFile = (path) => open(file(path));\n',
    '// API Gateway, or a function URL in BUFFERED mode (a page up to 6 MB): the handler index.handler.',
    'export const handler = lambdaHandler(site, read, openFile);',
    '// A function URL with InvokeMode RESPONSE_STREAM (a page up to 200 MB): the handler index.streamingHandler.',
    'export const streamingHandler = lambdaStreamingHandler(site, read, openFile);\n',
  ].join('\n'),
  '',
  "import { open, readFile } from 'node:fs/promises';\n",
);
/** An entry whose handlers are given a third argument (`open`): written by this version, or edited so. */
const OPENS = /lambdaHandler\([^,()]+,[^,()]+,[^()]+\)/;
const OLD_ENTRY = `${ENTRY} (yours, written by an earlier version) gives the handlers no \`open\`: pages of an ordering other than the default then read whole blocks of the package (~240 KB each) instead of their cities' bytes. docs/lambda.md shows the two lines to add`;
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
      "the package holds the cities once (the default ordering's layout) and 17 rank files of 4 bytes a city: about 600 bytes a city of GeoNames' (at 140,000 cities 80.8 MB), so some 430,000 of them fit; over it, answer from Cloudflare or Netlify (edge cloudflare, edge netlify), which read the edge data from the CDN rather than from the function",
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
    advice:
      "at 140,000 cities the process peaked at 61-68 MB for pages of up to 100 cities, 115 MB for a streamed page of every city and 112-116 MB for a buffered page of 5,000 (V8 sized as Lambda sizes it for 128 MB): 128 MB answers them, with little room, 256 MB leaves room where clients ask for pages of thousands, and Lambda gives CPU in proportion to memory (the guide's memory and time)",
  },
];

export const lambdaRecipe: EdgeRecipe = {
  platform: 'lambda',
  title: 'AWS Lambda',
  limits: LAMBDA_LIMITS,
  doc: 'docs/lambda.md',
  async project({ site, out, bundle, code, limit, check }) {
    const { files } = code(out);
    const entry = textFile(join(out, ENTRY), ENTRY_MODULE);
    const theirs = await readFile(entry.path).catch(() => undefined);
    const own = [
      { name: ENTRY, bytes: theirs ?? entry.bytes },
      { name: BUNDLE_NAME, bytes: bundle },
      { name: DATA_NAME, bytes: files.find((f) => f.path.endsWith(DATA_NAME))!.bytes },
    ];
    // The site's files the package holds (one layout of the cities: package-files.ts), measured
    // before they are read: the package unzipped is exactly the bytes of the entries zipped.
    const { index, files: siteFiles } = await packageFiles(site);
    const sizes = [...own.map((f) => f.bytes.length), ...siteFiles.map((f) => f.size)];
    check({ packageBytes: { value: sizes.reduce((a, b) => a + b, 0) } });
    const bytes = await packageBytes(site, index, siteFiles);
    const zip = zipArchive([...own, ...siteFiles.map((f, i) => ({ name: f.name, bytes: bytes[i]! }))]);
    return {
      ours: [...files, { path: join(out, 'function.zip'), bytes: zip }],
      theirs: [entry],
      deploy: zip.length > limit('zipBytes') ? FROM_S3 : DIRECT,
      warnings: theirs && !OPENS.test(new TextDecoder().decode(theirs)) ? [OLD_ENTRY] : [],
    };
  },
};
