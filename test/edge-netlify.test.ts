import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETLIFY_FUNCTION_PATH } from '../src/app/edge-project.js';
import { parseQuery } from '../src/core/query-string.js';
import { ROUTES } from '../src/core/route-table.js';
import { KIT_DATASETS, kitAnswers, replayKit, tempDir, type KitAnswer } from './helpers.js';
import { kitEdgeProject } from './edge-helpers.js';
import { requireTool } from './tool-check.js';

// `cities-api edge netlify` on Netlify's local runtime (@netlify/dev): the site's files and its
// `_redirects` (rewritten by the command to send what no file covers to the function), the
// function run as a Netlify Function v2. Every kit answer must equal serve's (the kit's), except
// the limits of Netlify's rules, each named below and in docs/netlify-functions.md.

const NETLIFY_DEV = join(import.meta.dirname, '..', 'node_modules', '@netlify', 'dev', 'package.json');
const available = requireTool('@netlify/dev', NETLIFY_DEV, 'npm ci (@netlify/dev is a dev dependency)');

const DOCUMENTED = {
  missingPage:
    'a page no file holds (page=6, page=abc, page=0): the rule names a file that does not exist, so Netlify\'s 404 page instead of {"detail": "Invalid page."}',
  extraParameter: 'an unknown extra parameter: the file of the known ones (same results; links lack it)',
  repeatedParameter: 'a repeated parameter: a file for one of its values (same results; links lack the others)',
  noTrailingSlash: 'the endpoint without its slash: answered like /cities/ where the reference redirects (301)',
  optionsFromFile: "OPTIONS of a URL a file covers: Netlify answers with the file's JSON, not the endpoint's metadata",
} as const;
type Limit = keyof typeof DOCUMENTED;

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-edge-netlify-')));
afterAll(() => cleanup());

interface Dev {
  start(): Promise<unknown>;
  stop(): Promise<void>;
  handleAndIntrospect(request: Request): Promise<{ response: Response; type: string } | undefined>;
}

/** The project under @netlify/dev, behind an HTTP server (as `netlify dev` puts it): its URL, and how many requests each part answered. */
async function netlifyDev(projectRoot: string) {
  const { NetlifyDev } = (await import('@netlify/dev')) as unknown as { NetlifyDev: new (options: object) => Dev };
  const off = { enabled: false };
  const dev = new NetlifyDev({
    projectRoot,
    serverAddress: 'http://127.0.0.1:9',
    blobs: off,
    database: off,
    images: off,
    aiGateway: off,
    geolocation: off,
    edgeFunctions: off,
    environmentVariables: off,
  });
  await dev.start();
  const answeredBy = new Map<string, number>();
  let url = '';
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const headers = Object.entries(req.headers).flatMap(([k, v]) =>
        v === undefined ? [] : [[k, String(v)] as [string, string]],
      );
      // The request's origin is the server's own, as Netlify's is the site's: the function reads the edge files from it.
      const found = await dev.handleAndIntrospect(
        new Request(`${url}${req.url}`, {
          method: req.method,
          headers,
          body: hasBody ? Buffer.concat(chunks) : undefined,
        }),
      );
      const type = found?.type ?? 'none';
      answeredBy.set(type, (answeredBy.get(type) ?? 0) + 1);
      if (!found) return void res.writeHead(404, { 'content-type': 'text/html' }).end('Not Found');
      res.writeHead(found.response.status, Object.fromEntries(found.response.headers));
      res.end(req.method === 'HEAD' ? undefined : Buffer.from(await found.response.arrayBuffer()));
    })().catch((error: Error) => res.writeHead(500).end(error.stack));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    answeredBy,
    stop: async () => {
      server.close();
      await dev.stop();
    },
  };
}

/** Which documented limit explains a kit answer Netlify gets wrong, or null. */
function limitOf(want: KitAnswer, prefix: string): Limit | null {
  const [path, query = ''] = want.target.split('?') as [string, string?];
  const names = parseQuery(query).map(([name]) => name);
  if (want.method === 'OPTIONS') return 'optionsFromFile';
  if (prefix + path === `${prefix}${ROUTES.endpoint.slice(0, -1)}`) return 'noTrailingSlash';
  // Invalid page is the endpoint's only 404 without `format` (HEAD answers carry no body to tell).
  if (
    want.status === 404 &&
    !names.includes(ROUTES.param.format) &&
    (want.method === 'HEAD' || (want.json as { detail?: string } | undefined)?.detail === 'Invalid page.')
  )
    return 'missingPage';
  if (names.some((name) => !Object.values(ROUTES.param).includes(name as never))) return 'extraParameter';
  if (new Set(names).size < names.length) return 'repeatedParameter';
  return null;
}

const totals = new Map<string, number>();

describe.skipIf(!available).each(KIT_DATASETS)(
  'kit dataset $name on Netlify (files, _redirects, the function)',
  ({ name, baseUrl, prefix }) => {
    it("every answer equals serve's but for the documented limits; uncovered queries run the function", async () => {
      const dir = join(root, name);
      const { project } = await kitEdgeProject(root, name, baseUrl, 'netlify', name, dir);
      expect(project.deploy).toBe('npx netlify deploy --prod');
      const dev = await netlifyDev(dir);
      try {
        const { passed, failed, failures } = await replayKit(dev.url, name, prefix);
        const wants = new Map((await kitAnswers(name)).map((want) => [`${want.method} ${want.target}`, want]));
        const undocumented: string[] = [];
        for (const failure of failures) {
          const key = /^FAIL (\S+ \S+?):/.exec(failure)?.[1] ?? '';
          const limit = wants.has(key) ? limitOf(wants.get(key)!, prefix) : null;
          if (!limit) undocumented.push(failure);
          else totals.set(limit, (totals.get(limit) ?? 0) + 1);
        }
        totals.set('passed', (totals.get('passed') ?? 0) + passed);
        totals.set('failed', (totals.get('failed') ?? 0) + failed);
        for (const [type, n] of dev.answeredBy)
          totals.set(`answered by ${type}`, (totals.get(`answered by ${type}`) ?? 0) + n);
        expect(undocumented).toEqual([]);
        expect(passed).toBeGreaterThanOrEqual(60);
        expect(dev.answeredBy.get('function')).toBeGreaterThanOrEqual(15);
      } finally {
        await dev.stop();
      }
    }, 300_000);
  },
);

describe('the generated Netlify project', () => {
  it('needs the site inside it (Netlify publishes a directory of the project)', async () => {
    await expect(
      kitEdgeProject(root, 'cities11', 'http://api.example.com', 'netlify', 'outside').then(() => 'written'),
    ).rejects.toThrow(/Netlify publishes a directory inside its project/);
  });

  it(`rewrites uncovered queries to the function's path (${NETLIFY_FUNCTION_PATH})`, async () => {
    const { readFile } = await import('node:fs/promises');
    const { project, site } = await kitEdgeProject(
      root,
      'cities11',
      'http://api.example.com',
      'netlify',
      'rules',
      join(root, 'rules'),
    );
    expect(await readFile(join(site, '_redirects'), 'utf8')).toContain(`${NETLIFY_FUNCTION_PATH}/cities/  200!`);
    expect(await readFile(join(project.out, 'netlify.toml'), 'utf8')).toContain('publish = "./site"');
  });
});

afterAll(() => {
  if (!available) return;
  const lines = [...totals].map(([k, n]) => `  ${n} ${k}`);
  console.log(
    `Netlify (@netlify/dev), all kit datasets:\n${lines.join('\n')}\ndocumented limits:\n${Object.entries(DOCUMENTED)
      .map(([k, v]) => `  ${k}: ${v}`)
      .join('\n')}`,
  );
});
