#!/usr/bin/env node
// What a computed answer reads on Cloudflare, where the Worker reads edge files whole (the assets
// binding ignores Range): sites built `--for cloudflare`, each read by this version's edge source
// from disk in whole files, with no block cache (every answer reads its own blocks, as a fresh
// isolate does after its one-time reads of the index and the rank files), each into the array
// the reader gives, as the Worker's reads are. Per query kind (thin multi-field pages whose first
// field ties in large groups, pages of one layout for comparison, and pages of every city, two
// each): the bytes of blocks read per answer, median and most, against the goal 3 x the answer +
// 512 KB, and the most block files read (each an asset read on Cloudflare). Each body is checked
// against answerListing over the whole dataset. Also each
// site's files as Cloudflare publishes them (its plan, .assetsignore applied) and its largest.
//
// Give two sites (e.g. one built by the previous version: the baseline, measured in the same run):
//   node scripts/bench-cloudflare-reads.mjs --data bench-data/cities-140k-tied.json --site OLD --site NEW [--pages 12]
// Without --site, builds one from --data into a temporary directory (removed afterwards). Reads lib/: npm run build first.
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as bench from './bench/edge-lib.mjs';

const ROOT = join(import.meta.dirname, '..');
const { values: opts } = parseArgs({
  options: {
    data: { type: 'string', default: join(ROOT, 'bench-data', 'cities-140k-tied.json') },
    site: { type: 'string', multiple: true },
    pages: { type: 'string', default: '12' },
  },
});
const PAGES = Number(opts.pages);
const { EdgeSource } = await bench.lib('site/edge-source.js');

/** The query kinds: the i-th page of each (distinct pages, spread over the list). */
const kinds = (count) => [
  ['thin multi-field: name_it (37 values), name_en; 10', (i) => q('name_it,name_en', 10, count, i)],
  ['thin multi-field: name_it, name_en; 100', (i) => q('name_it,name_en', 100, count, i)],
  ['thin multi-field: -name_sp (2 values), -top; 10', (i) => q('-name_sp,-top', 10, count, i)],
  ['thin multi-field: -name_sp, -top; 100', (i) => q('-name_sp,-top', 100, count, i)],
  ['thin multi-field: name_de (135 values), name_ar; 10', (i) => q('name_de,name_ar', 10, count, i)],
  ['thin multi-field: name_de, name_ar; 100', (i) => q('name_de,name_ar', 100, count, i)],
  [
    'thin multi-field: -name_ru (11 values), name_fr, -name_en; 10',
    (i) => q('-name_ru,name_fr,-name_en', 10, count, i),
  ],
  ['one layout: name_ar; 100', (i) => q('name_ar', 100, count, i)],
  ['one layout: name_it; 100', (i) => q('name_it', 100, count, i)],
  // Pages of every city: the same page each time (read afresh: no block cache).
  ['every city: name_it, name_en', () => `ordering=name_it,name_en&page_size=${count}`],
  ['every city: -name_sp, -top', () => `ordering=-name_sp,-top&page_size=${count + 1}`],
  ['every city: name_ar', () => `ordering=name_ar&page_size=${count}`],
];
/** Page i of PAGES spread over the list (never its first: that one makes the one-time reads). */
function q(ordering, size, count, i) {
  const pages = Math.ceil(count / size);
  return `ordering=${ordering}&page_size=${size}&page=${2 + Math.floor(((pages - 2) * (i + 0.5)) / PAGES)}`;
}

const BASE = 'https://api.example.org';
const made = [];
let sites = opts.site ?? [];
if (!sites.length) {
  const out = join(mkdtempSync(join(tmpdir(), 'cities-api-cfreads-')), 'site');
  made.push(out);
  await bench.build({ data: opts.data, out, baseUrl: BASE, host: 'cloudflare' });
  sites = [out];
}
try {
  const table = await bench.readDataset(opts.data);
  const collation = (await bench.readManifestHead(sites[0])).settings.collation;
  const index = new bench.CityIndex(table, collation);
  console.log(`${table.count.toLocaleString('en')} cities (${opts.data}), ${PAGES} pages a kind, no block cache\n`);
  const rows = new Map();
  for (const site of sites) {
    const { settings } = await bench.readManifestHead(site);
    const plan = await bench.planAssets(site, bench.CLOUDFLARE_FREE);
    console.log(
      `${site}: fineBlockBytes ${settings.fineBlockBytes ?? 'none'}, first pages ${settings.firstPages}; published ${plan.files.toLocaleString('en')} files, ${(plan.bytes / 1e6).toFixed(0)} MB (limit ${bench.CLOUDFLARE_FREE.files.toLocaleString('en')}), largest ${(plan.largest.value / 2 ** 20).toFixed(1)} MiB (${plan.largest.of}) (limit ${bench.CLOUDFLARE_FREE.fileBytes / 2 ** 20})`,
    );
    for (const [kind, query] of kinds(table.count)) {
      const reads = { bytes: 0, count: 0 };
      // As the Worker reads a file (http/edge-site.ts httpRead, a Content-Length said): into the array `into` gives.
      const read = async (path, into) => {
        const bytes = new Uint8Array(await readFile(join(site, path)));
        if (path.includes('/rows/')) [reads.bytes, reads.count] = [reads.bytes + bytes.length, reads.count + 1];
        if (!into) return bytes;
        const target = into(bytes.length).subarray(0, bytes.length);
        target.set(bytes);
        return target;
      };
      const source = new EdgeSource(read, { cacheBytes: 0, maxPageCities: Number.POSITIVE_INFINITY });
      await source.answer(bench.parseQuery(query(0).replace(/page=\d+/, 'page=1')), BASE);
      const per = [];
      for (let i = 0; i < (kind.startsWith('every city') ? Math.min(PAGES, 2) : PAGES); i++) {
        const pairs = bench.parseQuery(query(i));
        [reads.bytes, reads.count] = [0, 0];
        const body = bench.bodyBytes((await source.answer(pairs, BASE)).body);
        if (!Buffer.from(body).equals(bench.bodyBytes(bench.answerListing(index, pairs, BASE).body)))
          throw new Error(`${site} ?${query(i)}: the edge answer differs from answerListing's`);
        per.push({ read: reads.bytes, goal: 3 * body.length + 512_000, answer: body.length, files: reads.count });
      }
      per.sort((a, b) => a.read - b.read);
      const row = rows.get(kind) ?? [];
      row.push(per);
      rows.set(kind, row);
    }
  }
  const kb = (n) => `${Math.round(n / 1000).toLocaleString('en')} KB`;
  console.log(
    `\nbytes of blocks read per answer: median / most (answer median; over the goal 3 x answer + 512 KB; files read, the most), per site`,
  );
  for (const [kind, row] of rows) {
    const cells = row.map((per) => {
      const median = per[per.length >> 1];
      const over = per.filter((p) => p.read > p.goal).length;
      const files = Math.max(...per.map((p) => p.files)).toLocaleString('en');
      return `${kb(median.read)} / ${kb(per.at(-1).read)} (answer ${kb(median.answer)}; over ${over}/${per.length}; ${files} files)`;
    });
    console.log(`  ${kind}: ${cells.join('  |  ')}`);
  }
} finally {
  for (const dir of made) rmSync(join(dir, '..'), { recursive: true, force: true });
}
