import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, lstatSync, realpathSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { City } from '../src/core/fields.js';
import { CityLog } from '../src/dataset/city-log.js';
import { killStragglers, spawnCli } from './crash-helpers.js';
import { KIT, makeCity, tempDir } from './helpers.js';
import { createAt, SMALL_SITE, servedAt, startCli, writableCli } from './serve-helpers.js';

// A city a writable server acknowledged and logged (`.NAME.wal` beside the dataset), not folded in
// yet, whose id the user then gave to a row of their own in the dataset file: every reader of the
// log refuses to take that row for the city (LoggedIdTaken: file, log, id, the fields that differ),
// as real processes. Taken for it, the acknowledged city was lost: folded as "already in the file"
// (the log deleted), or left out of a server's answers with nothing said.

const TOKEN = 'logged-id-taken-token-0123456789';
let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-logged-id-taken-')));
afterAll(() => cleanup());
afterEach(() => killStragglers());

/** A copy of the 11-city dataset (CRLF line ends) in a directory of its own. */
async function dataset(name: string): Promise<{ dir: string; data: string }> {
  const dir = join(root, name);
  await mkdir(dir);
  const data = join(dir, 'cities.csv');
  await copyFile(join(KIT, 'cities11.csv'), data);
  return { dir, data };
}

/** A row of the user's named Mine with `id`, in the file's columns and line ends. */
function mine(data: string, id: number): string {
  const header = readFileSync(data, 'utf8').split('\r\n')[0]!.split(',') as (keyof City)[];
  const city = makeCity(id, { name: 'Mine', longitude: 7 });
  return `${header.map((field) => String(city[field])).join(',')}\r\n`;
}

/** What a refusal says: the file, the log, the id, the first field that differs, what to do. */
const refusal = (id: number) =>
  new RegExp(
    `cities\\.csv: id ${id} is that of a city a writable server created \\(acknowledged\\) and logged in \\S*/\\.cities\\.csv\\.wal, not folded in yet, but its row with that id is another record \\(id ${id}: name_ar "Mine" in the file, "Logged" logged; .*\\): folded in as it is, the created city would be lost\\. Give the row of your own another id, or remove it, then run again \\(the log is kept until then\\)`,
  );

/** The names the log of `data` holds. */
const loggedNames = async (data: string) => (await CityLog.of(realpathSync(data)).read()).cities.map((c) => c.name_en);

/** The dataset file, its log and every file of the site (its behind marker too), with their bytes and modification times. */
function snapshot(data: string, site: string): Record<string, string> {
  const paths = [data, CityLog.of(realpathSync(data)).path];
  for (const entry of readdirSync(site, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) paths.push(join(entry.parentPath, entry.name));
  return Object.fromEntries(
    paths.map((path) => [path, `${lstatSync(path).mtimeMs} ${readFileSync(path).toString('base64')}`]),
  );
}

/** Polls `done` every 100 ms until it holds or `ms` have passed. */
async function until(done: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = performance.now() + ms;
  while (!(await done()) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
}

/**
 * Holds the site `site`'s lock (a live process's: another build, as the writable server sees it)
 * while `task` runs, so that a writable server's catch-up cannot fold what it logged in.
 */
async function siteHeld<T>(dir: string, site: string, task: () => Promise<T>): Promise<T> {
  const holder = spawn('sleep', ['600']);
  const lock = join(dir, `.${site}.lock`);
  try {
    await writeFile(lock, `${holder.pid}\n`);
    return await task();
  } finally {
    await rm(lock, { force: true });
    holder.kill();
  }
}

/** POSTs a city named Logged: its id once acknowledged. */
async function logged(url: string): Promise<number> {
  const created = await createAt(url, TOKEN, 'Logged');
  expect(created.status).toBe(201);
  return (JSON.parse(created.body.toString()) as City).id;
}

describe('after a writable server was killed with a city logged, a row of the user given its id: every command refuses, writing nothing', () => {
  const serve = (data: string, site: string, ...more: string[]) => [
    'serve',
    site,
    '--data',
    data,
    '--port',
    '0',
    ...SMALL_SITE,
    ...more,
  ];
  it.each<[string, (data: string, site: string) => string[]]>([
    ['build', (data, site) => ['build', '--data', data, '--site', site, ...SMALL_SITE]],
    ['validate', (data) => ['validate', '--data', data]],
    ['serve --data', (data, site) => serve(data, site)],
    ['serve --data --watch', (data, site) => serve(data, site, '--watch')],
    ['serve --data --writable', (data, site) => serve(data, site, '--writable')],
  ])('%s: exit 1, the refusal said, the dataset, its log and the site unchanged', async (name, args) => {
    const { dir, data } = await dataset(name.replaceAll(/[ -]+/g, '-'));
    const site = join(dir, 'site');
    const server = await writableCli(site, data, TOKEN);
    let id: number;
    try {
      id = await siteHeld(dir, 'site', async () => {
        const id = await logged(server.url);
        const exited = new Promise((resolve) => server.child.once('exit', resolve));
        server.child.kill('SIGKILL');
        await exited;
        return id;
      });
    } finally {
      await server.stop();
    }
    await writeFile(data, `${await readFile(data, 'utf8')}${mine(data, id)}`);
    const before = snapshot(data, site);
    const { code, stderr } = await spawnCli(args(data, site), { CITIES_API_TOKEN: TOKEN }).exited;
    expect({ code, said: refusal(id).test(stderr), logged: await loggedNames(data) }).toEqual({
      code: 1,
      said: true,
      logged: ['Logged'],
    });
    expect(snapshot(data, site)).toEqual(before);
  });
});

describe('a row of the user given a logged id while a server runs', () => {
  it.each<[string, string[]]>([
    ['serve --writable', []],
    ['serve --writable --watch', ['--watch']],
  ])(
    '%s: the catch-up refuses and says why (retrying), the rebuild (--watch) is not used, the city still answered; at stop not folded in, the log kept, exit 1',
    async (name, more) => {
      const { dir, data } = await dataset(name.replaceAll(/[ -]+/g, '-'));
      const args = [join(dir, 'site'), '--data', data, '--port', '0', '--writable', ...more, ...SMALL_SITE];
      const server = await startCli(args, { CITIES_API_TOKEN: TOKEN });
      const watch = more.includes('--watch');
      try {
        // Held until the row is in: the catch-up cannot fold the city in before the edit.
        const id = await siteHeld(dir, 'site', async () => {
          const id = await logged(server.url);
          await writeFile(data, `${await readFile(data, 'utf8')}${mine(data, id)}`);
          return id;
        });
        const edited = await readFile(data);
        const caughtUp = new RegExp(
          `error: the site is behind the data \\(retrying in [\\d.]+ s\\): .*${refusal(id).source}`,
        );
        const rebuilt = new RegExp(`changed but was not used: .*${refusal(id).source}`);
        const said = () => ({
          catchUp: caughtUp.test(server.output()),
          ...(watch && { rebuild: rebuilt.test(server.output()) }),
        });
        await until(() => Object.values(said()).every(Boolean), 30_000);
        const names = await servedAt(server.url);
        expect({ said: said(), logged: names.includes('Logged'), mine: names.includes('Mine') }).toEqual({
          said: { catchUp: true, ...(watch && { rebuild: true }) },
          logged: true,
          mine: false,
        });
        await server.stop();
        // Refused as a start would be (exit 1), not a clean stop (0).
        expect({ code: server.child.exitCode, said: server.output() }).toEqual({
          code: 1,
          said: expect.stringMatching(
            new RegExp(
              `cities-api: logged cities not folded into .* \\(they are next time\\): .*${refusal(id).source}`,
            ),
          ),
        });
        expect(server.output()).toMatch(/^stopped$/m);
        expect({ logged: await loggedNames(data), file: (await readFile(data)).equals(edited) }).toEqual({
          logged: ['Logged'],
          file: true,
        });
      } finally {
        await server.stop();
      }
    },
    120_000,
  );

  it('serve --watch (not writable) beside a writable server of another site: the rebuild is not used (said why), the city still answered; the row given another id, both answered', async () => {
    const { dir, data } = await dataset('watch-beside');
    const reader = await startCli([join(dir, 'read-site'), '--data', data, '--watch', '--port', '0', ...SMALL_SITE]);
    const writer = await writableCli(join(dir, 'write-site'), data, TOKEN);
    try {
      await siteHeld(dir, 'write-site', async () => {
        const id = await logged(writer.url);
        await until(async () => (await servedAt(reader.url)).includes('Logged'), 20_000);
        const file = await readFile(data, 'utf8');
        await writeFile(data, `${file}${mine(data, id)}`);
        const rebuilt = new RegExp(`changed but was not used: .*${refusal(id).source}`);
        await until(() => rebuilt.test(reader.output()), 30_000);
        const names = await servedAt(reader.url);
        expect({
          said: rebuilt.test(reader.output()),
          logged: names.includes('Logged'),
          mine: names.includes('Mine'),
        }).toEqual({
          said: true,
          logged: true,
          mine: false,
        });
        // Fixed: the row of the user's given another id, the dataset is the file plus the logged city again.
        await writeFile(data, `${file}${mine(data, id + 100)}`);
        await until(async () => (await servedAt(reader.url)).includes('Mine'), 30_000);
        const fixed = await servedAt(reader.url);
        expect({ logged: fixed.includes('Logged'), mine: fixed.includes('Mine'), all: fixed.length }).toEqual({
          logged: true,
          mine: true,
          all: 13,
        });
      });
    } finally {
      await writer.stop();
      await reader.stop();
    }
  }, 120_000);
});
