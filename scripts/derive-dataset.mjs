#!/usr/bin/env node
// Derives data/cities.csv, the dataset bundled with cities-api.
//
// Sources:
//   - Localized city names: Unicode CLDR, npm package cldr-dates-full@48.2.0,
//     main/<locale>/timeZoneNames.json -> dates.timeZoneNames.zone.<Area>.<City>.exemplarCity.
//     A locale without an exemplarCity inherits the name, so the English one is used.
//     The package is NOT a project dependency: it is installed on demand into the
//     git-ignored .cache/cldr folder.
//   - Coordinates: tzdata's /usr/share/zoneinfo/zone1970.tab (Debian package tzdata).
//   - Two hand-curated rows (the two Hyderabads), marked as such below.
//
// Run from anywhere: node scripts/derive-dataset.mjs
// The output is committed; rerun only to regenerate it. Output is deterministic.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'data', 'cities.csv');
const CLDR_VERSION = '48.2.0';
const CLDR_PREFIX = join(ROOT, '.cache', 'cldr');
const CLDR_DIR = join(CLDR_PREFIX, 'node_modules', 'cldr-dates-full');
const ZONE_TAB = '/usr/share/zoneinfo/zone1970.tab';

// CSV column suffix -> CLDR locale.
const LANGS = [
  ['ar', 'ar'],
  ['en', 'en'],
  ['ch', 'zh'],
  ['fr', 'fr'],
  ['ur', 'ur'],
  ['fa', 'fa'],
  ['sp', 'es'],
  ['de', 'de'],
  ['it', 'it'],
  ['uk', 'uk'],
  ['hi', 'hi'],
  ['id', 'id'],
  ['ru', 'ru'],
  ['pt', 'pt'],
  ['ms', 'ms'],
  ['tr', 'tr'],
];
const HEADER = ['id', ...LANGS.map(([c]) => `name_${c}`), 'longitude', 'latitude', 'top', 'created_at', 'updated_at'];

// The 46 tz zone cities (canonical tz ids, as in zone1970.tab).
const ZONES = [
  'Africa/Cairo',
  'Africa/Johannesburg',
  'Africa/Lagos',
  'Africa/Nairobi',
  'America/Argentina/Buenos_Aires',
  'America/Bogota',
  'America/Chicago',
  'America/Lima',
  'America/Los_Angeles',
  'America/Mexico_City',
  'America/New_York',
  'America/Sao_Paulo',
  'America/Toronto',
  'Asia/Baghdad',
  'Asia/Bangkok',
  'Asia/Beirut',
  'Asia/Dhaka',
  'Asia/Dubai',
  'Asia/Ho_Chi_Minh',
  'Asia/Hong_Kong',
  'Asia/Jakarta',
  'Asia/Kabul',
  'Asia/Karachi',
  'Asia/Kolkata',
  'Asia/Kuala_Lumpur',
  'Asia/Manila',
  'Asia/Riyadh',
  'Asia/Seoul',
  'Asia/Shanghai',
  'Asia/Singapore',
  'Asia/Tehran',
  'Asia/Tokyo',
  'Australia/Sydney',
  'Europe/Athens',
  'Europe/Berlin',
  'Europe/Helsinki',
  'Europe/Istanbul',
  'Europe/Kyiv',
  'Europe/Lisbon',
  'Europe/London',
  'Europe/Madrid',
  'Europe/Moscow',
  'Europe/Paris',
  'Europe/Rome',
  'Europe/Vienna',
  'Europe/Warsaw',
];
// CLDR still keys these zones by their older tz names.
const CLDR_ALIAS = {
  'America/Argentina/Buenos_Aires': 'America/Buenos_Aires',
  'Asia/Ho_Chi_Minh': 'Asia/Saigon',
  'Asia/Kolkata': 'Asia/Calcutta',
  'Europe/Kyiv': 'Europe/Kiev',
};
// A city with no location, to exercise null coordinates. Kuala Lumpur is a natural
// pick: since tzdata 2023 Asia/Kuala_Lumpur is a link to Asia/Singapore, so
// zone1970.tab has no row (and no coordinates) for it. Omitted deliberately, so the
// output does not depend on the installed tzdata version.
const NO_COORDS = new Set(['Asia/Kuala_Lumpur']);
const TOP = new Set([
  'Europe/London',
  'Europe/Paris',
  'Asia/Tokyo',
  'America/New_York',
  'Africa/Cairo',
  'Europe/Istanbul',
  'Asia/Dubai',
  'Europe/Moscow',
]);

// HAND-CURATED rows (not tz zones, not from CLDR): two different cities that share
// name_en and name_ar, differing in coordinates. Names in other languages are the
// usual ones; where no distinct usual form is known, the English name is used.
const HYDERABAD = {
  ar: 'حيدر آباد',
  en: 'Hyderabad',
  ch: '海得拉巴',
  fr: 'Hyderabad',
  ur: 'حیدرآباد',
  fa: 'حیدرآباد',
  sp: 'Hyderabad',
  de: 'Hyderabad',
  it: 'Hyderabad',
  uk: 'Гайдарабад',
  hi: 'हैदराबाद',
  id: 'Hyderabad',
  ru: 'Хайдарабад',
  pt: 'Hyderabad',
  ms: 'Hyderabad',
  tr: 'Haydarabad',
};
const CURATED = [
  { key: 'curated/Hyderabad (India)', names: HYDERABAD, lon: 78.474444, lat: 17.361667 },
  { key: 'curated/Hyderabad (Pakistan)', names: HYDERABAD, lon: 68.366667, lat: 25.366667 },
];

function fail(msg) {
  console.error(`derive-dataset: ${msg}`);
  process.exit(1);
}

function ensureCldr() {
  const pkg = join(CLDR_DIR, 'package.json');
  if (existsSync(pkg) && JSON.parse(readFileSync(pkg, 'utf8')).version === CLDR_VERSION) return;
  console.error(`installing cldr-dates-full@${CLDR_VERSION} into .cache/cldr ...`);
  mkdirSync(CLDR_PREFIX, { recursive: true });
  execFileSync(
    'npm',
    ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', CLDR_PREFIX, `cldr-dates-full@${CLDR_VERSION}`],
    { stdio: ['ignore', 2, 2] },
  );
  if (!existsSync(pkg)) fail('cldr-dates-full did not install');
}

function loadZoneNames(locale) {
  const file = join(CLDR_DIR, 'main', locale, 'timeZoneNames.json');
  return JSON.parse(readFileSync(file, 'utf8')).main[locale].dates.timeZoneNames.zone;
}

function exemplarCity(zoneNames, cldrId) {
  let node = zoneNames;
  for (const part of cldrId.split('/')) node = node?.[part];
  return node?.exemplarCity;
}

// ISO 6709 "±DDMM±DDDMM" or "±DDMMSS±DDDMMSS" -> [lat, lon] in decimal degrees.
function parseIso6709(s) {
  const m = /^([+-])(\d{2})(\d{2})(\d{2})?([+-])(\d{3})(\d{2})(\d{2})?$/.exec(s);
  if (!m) fail(`bad coordinates in zone1970.tab: ${s}`);
  const dms = (sign, d, mi, se = '0') => (sign === '-' ? -1 : 1) * (+d + mi / 60 + se / 3600);
  return [dms(m[1], m[2], m[3], m[4]), dms(m[5], m[6], m[7], m[8])];
}

function loadZoneTab() {
  if (!existsSync(ZONE_TAB)) fail(`${ZONE_TAB} not found; install it: apt-get install tzdata`);
  const coords = new Map();
  for (const line of readFileSync(ZONE_TAB, 'utf8').split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const [, iso, tz] = line.split('\t');
    coords.set(tz, parseIso6709(iso));
  }
  return coords;
}

// Decimal degrees, at most 6 decimals, no exponent, no trailing zeros ("12", "-0.1275").
function fmtDeg(x, limit) {
  if (!(Math.abs(x) <= limit)) fail(`coordinate out of range: ${x}`);
  const s = x.toFixed(6).replace(/\.?0+$/, '');
  return s === '-0' ? '0' : s;
}

// Deterministic timestamps from the id, with non-zero microseconds.
const EPOCH_US = BigInt(Date.UTC(2024, 0, 1)) * 1000n;
function fmtTimestamp(us) {
  const iso = new Date(Number(us / 1000n)).toISOString().slice(0, 19);
  return `${iso}.${String(us % 1000000n).padStart(6, '0')}Z`;
}
function timestamps(id) {
  const n = BigInt(id);
  const created = EPOCH_US + n * 37n * 3600n * 1000000n + n * 123457n;
  const updated = created + (((n * 11n) % 97n) + 1n) * 3600n * 1000000n + ((n * 654321n) % 86400000000n);
  return [fmtTimestamp(created), fmtTimestamp(updated)];
}

function csvField(v) {
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

function main() {
  ensureCldr();
  const coords = loadZoneTab();
  const zoneNames = Object.fromEntries(LANGS.map(([, loc]) => [loc, loadZoneNames(loc)]));

  const cities = [...ZONES].sort().map((tz) => {
    const cldrId = CLDR_ALIAS[tz] ?? tz;
    if (!LANGS.some(([, loc]) => exemplarCity(zoneNames[loc], cldrId))) {
      fail(`no CLDR exemplarCity in any locale for ${tz} (CLDR key ${cldrId})`);
    }
    const en = exemplarCity(zoneNames.en, cldrId) ?? tz.split('/').at(-1).replaceAll('_', ' ');
    const names = {};
    for (const [col, loc] of LANGS) names[col] = exemplarCity(zoneNames[loc], cldrId) ?? en;
    let lat = null,
      lon = null;
    if (!NO_COORDS.has(tz)) {
      if (!coords.has(tz)) fail(`${tz} not in ${ZONE_TAB}`);
      [lat, lon] = coords.get(tz);
    }
    return { key: tz, names, lon, lat };
  });
  cities.push(...CURATED);

  const lines = [HEADER.join(',')];
  cities.forEach((c, i) => {
    const id = i + 1;
    const hasCoords = c.lon !== null && c.lat !== null;
    const row = [
      id,
      ...LANGS.map(([col]) => {
        if (!c.names[col]) fail(`empty name_${col} for ${c.key}`);
        return c.names[col];
      }),
      hasCoords ? fmtDeg(c.lon, 180) : '',
      hasCoords ? fmtDeg(c.lat, 90) : '',
      TOP.has(c.key) ? 'true' : 'false',
      ...timestamps(id),
    ];
    lines.push(row.map(csvField).join(','));
  });

  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${lines.join('\n')}\n`, 'utf8');
  const noCoords = cities.filter((c) => c.lon === null).length;
  const top = cities.filter((c) => TOP.has(c.key)).length;
  console.log(`wrote ${cities.length} rows to data/cities.csv (${noCoords} without coordinates, ${top} top)`);
}

main();
