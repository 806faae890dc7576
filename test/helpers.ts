import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { NAME_FIELDS, type City } from '../src/core/fields.js';
import { PRECOMPUTABLE_ORDERINGS } from '../src/core/ordering.js';
import { siteSpec, type SiteSettings, type SiteSpec } from '../src/site/spec.js';

export const KIT = join(import.meta.dirname, 'fixtures', 'conformance');

/** A valid city whose every name is `name` unless overridden. */
export function makeCity(id: number, overrides: Partial<City> & { name?: string } = {}): City {
  const { name = `City ${id}`, ...rest } = overrides;
  const names = Object.fromEntries(NAME_FIELDS.map((f) => [f, name])) as Record<(typeof NAME_FIELDS)[number], string>;
  return {
    id,
    ...names,
    longitude: 1.5,
    latitude: -2.25,
    top: false,
    created_at: '2024-01-01T00:00:00.000001Z',
    updated_at: '2024-01-02T00:00:00.000002Z',
    ...rest,
  };
}

/**
 * The disk's temporary directory (vitest.config.ts puts TMPDIR on tmpfs, /dev/shm), for the files
 * of tests that need a disk: Deno 2 refuses every read under /dev without --allow-all ("Requires
 * all access to /dev/shm/..."), whatever --allow-read allows.
 */
export const DISK_TMPDIR = process.env.CITIES_API_TEST_DISK_TMPDIR ?? tmpdir();

export async function tempDir(
  label = 'cities-api-',
  parent = tmpdir(),
): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(parent, label));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Every file under dir with its bytes, keyed by relative path. Read synchronously: the bundled
 * dataset's 2,121-file site took 0.06 CPU-s so, 0.55 with fs/promises (a thread-pool trip per file). */
export async function readTree(dir: string): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(dir, path), readFileSync(path));
  }
  return files;
}

export interface KitAnswer {
  method: string;
  target: string;
  status: number;
  headers: Record<string, string>;
  json?: unknown;
  level: 'core' | 'metadata' | 'status';
}

export const KIT_DATASETS = [
  { name: 'cities48', baseUrl: 'http://api.example.com', prefix: '' },
  { name: 'cities11', baseUrl: 'http://api.example.com', prefix: '' },
  { name: 'empty', baseUrl: 'http://api.example.com', prefix: '' },
  { name: 'cities1234', baseUrl: 'http://api.example.com', prefix: '' },
  { name: 'prefixed30', baseUrl: 'https://cities.example.org/api/v1', prefix: '/api/v1' },
] as const;

/**
 * Paths that a URL parser or nginx reads as the endpoint (`/cities/`), its dot segments resolved or
 * its slashes (also `%2F`, to nginx) merged, where the reference (gunicorn, then Django) reads them as sent and answers
 * each 404 (`/./cities`: no redirect either).
 */
export const DOT_SEGMENT_TARGETS = [
  '/./cities/',
  '/cities/./',
  '/x/../cities/',
  '/cities/../cities/?page=2',
  '/%2e/cities/',
  '/cities/%2E%2E/cities/',
  '/cities/.%2e/cities/?ordering=name_en',
  '//cities/',
  '/cities//',
  '/cities/%2F',
  '/cities%2f/',
  '/cities/.%2F',
  '/./cities',
  '/cities/.',
] as const;

export async function kitAnswers(name: string): Promise<KitAnswer[]> {
  const text = await readFile(join(KIT, `${name}.expected.jsonl`), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as KitAnswer);
}

/** Replays a kit dataset's recorded requests against a running server with the kit's own run.mjs. */
export async function replayKit(
  url: string,
  name: string,
  prefix?: string,
  extra: string[] = [],
): Promise<{ passed: number; failed: number; failures: string[]; stdout: string }> {
  const args = [
    join(KIT, 'run.mjs'),
    url,
    join(KIT, `${name}.expected.jsonl`),
    ...extra,
    ...(prefix ? ['--prefix', prefix] : []),
  ];
  const { stdout } = await promisify(execFile)(process.execPath, args).catch((e: { stdout: string }) => e);
  const [, passed, failed] = /(\d+) passed, (\d+) failed\s*$/.exec(stdout) ?? [];
  return {
    passed: Number(passed),
    failed: Number(failed),
    failures: stdout.split('\n').filter((l) => l.startsWith('FAIL')),
    stdout,
  };
}

/** Replays a kit dataset against `url`, adds the counts to `totals`, and expects all 80 answers to match. */
export async function expectWholeKit(
  url: string,
  name: string,
  prefix: string | undefined,
  totals: { passed: number; failed: number },
  extra: string[] = [],
): Promise<Awaited<ReturnType<typeof replayKit>>> {
  const replay = await replayKit(url, name, prefix, extra);
  totals.passed += replay.passed;
  totals.failed += replay.failed;
  expect(replay.failures).toEqual([]);
  expect([replay.passed, replay.failed]).toEqual([80, 0]);
  return replay;
}

/**
 * The entries of a directory, sorted, without what a site and a dataset keep beside them: the stat
 * caches builds keep (`.NAME.stat-cache`), a preview's marker and a writable server's record while
 * they run (`.NAME.preview`, `.NAME.writer-PID-TAG`), the record of a dataset's folds (`.NAME.folds`).
 */
export async function entriesOf(dir: string): Promise<string[]> {
  return (await readdir(dir))
    .filter((name) => !/^\..+\.(stat-cache|preview|writer-\d+-[0-9a-f]{8}|folds)$/.test(name))
    .sort();
}

/** A site spec for tests: the kit's base URL, code-point collation, the default page sizes, all 33 orderings, 48 cities, unless overridden. */
export function testSpec(overrides: Partial<SiteSpec> = {}): SiteSpec {
  const settings: SiteSettings = {
    baseUrl: 'http://api.example.com',
    collation: 'codepoint',
    pageSizes: [10, 20, 50, 100],
    orderings: [...PRECOMPUTABLE_ORDERINGS],
    defaultPageSize: 10,
    compression: 'fast',
    liveUrl: null,
    ...overrides,
  };
  return { ...siteSpec(settings, overrides.count ?? 48), ...overrides };
}
