import { readFileSync } from 'node:fs';
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve } from '../src/app/serve.js';
import { ANSWERING_FLAGS } from '../src/proc/answering-flags.js';
import { kitSite } from './edge-helpers.js';
import { KIT, KIT_DATASETS, makeCity, replayKit, tempDir } from './helpers.js';
import { rawRequest, startCli } from './serve-helpers.js';

// `serve --workers 2`: two processes share the port (node:cluster hands connections to them in
// turn), the primary is the one writer. Each check reads through fresh connections (Connection:
// close), so that both workers answer it.
const TOKEN = 'test-token-0123456789';
let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-workers-')));
afterAll(() => cleanup());

/** One ordering and page size in files (the counts below are asked live): each build or rebuild is a few files. */
const SMALL = { orderings: ['default'], pageSizes: [10] };

/** The worker processes of a server process (Linux /proc). */
const workersOf = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);

/** The flags a process was started with (Linux /proc). */
const flagsOf = (pid: string) =>
  readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    .split('\0')
    .filter((arg) => arg.startsWith('--'));

/** `count` of the first page, asked through `n` fresh connections. */
async function countsSeen(apiUrl: string, n = 8): Promise<number[]> {
  const counts: number[] = [];
  for (let i = 0; i < n; i++) {
    const res = await rawRequest(`${apiUrl}?page_size=7&n=${i}`, { headers: { Connection: 'close' } });
    counts.push((JSON.parse(res.body.toString()) as { count: number }).count);
  }
  return counts;
}

// The run's shared kit site (built once, no .gz/.br; edge-helpers kitSite), served as it is: what is
// checked here is that both workers answer the kit. `serve --data` with workers (the primary builds,
// then forks) is the cases below; the kit through serve's own build, compressed siblings included, conformance-serve.
describe.each(KIT_DATASETS)('kit dataset $name through serve --workers 2', ({ name, baseUrl, prefix }) => {
  it('every answer matches, twice (each worker answers)', async () => {
    const server = await startCli([await kitSite(name, baseUrl), '--port', '0', '--workers', '2']);
    try {
      expect(server.output()).toMatch(/ with 2 workers /);
      expect(workersOf(server.child.pid!)).toHaveLength(2);
      // Their young generation collected on the answering thread (answering-flags.ts).
      for (const pid of workersOf(server.child.pid!))
        expect(flagsOf(pid)).toEqual(expect.arrayContaining([...ANSWERING_FLAGS]));
      for (let round = 0; round < 2; round++) {
        const { passed, failed, failures } = await replayKit(server.url, name, prefix);
        expect(failures).toEqual([]);
        expect([passed, failed]).toEqual([80, 0]);
      }
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe('the one writer, every worker reloading', () => {
  it('a POST through one worker is answered by every worker once it is created', async () => {
    const data = join(root, 'post.csv');
    await copyFile(join(KIT, 'cities11.csv'), data);
    const server = await serve({
      dir: join(root, 'post-site'),
      data,
      port: 0,
      writable: true,
      token: TOKEN,
      collation: 'codepoint',
      ...SMALL,
      workers: 2,
    });
    try {
      expect(await countsSeen(server.apiUrl)).toEqual(Array(8).fill(11));
      for (let i = 1; i <= 2; i++) {
        const body = JSON.stringify({ ...makeCity(0, { name: `Neu ${i}` }), id: undefined });
        const res = await rawRequest(server.apiUrl, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Authorization: `Token ${TOKEN}`, Connection: 'close' },
          body,
        });
        expect(res.status, res.body.toString()).toBe(201);
        expect(await countsSeen(server.apiUrl)).toEqual(Array(8).fill(11 + i));
      }
    } finally {
      await server.close();
    }
  }, 120_000);

  it('a --watch rebuild is answered by every worker once it is reported', async () => {
    const data = join(root, 'watch.json');
    await copyFile(join(KIT, 'cities11.json'), data);
    const lines: string[] = [];
    const server = await serve({
      dir: join(root, 'watch-site'),
      data,
      port: 0,
      watch: true,
      collation: 'codepoint',
      ...SMALL,
      workers: 2,
      log: (line) => lines.push(line),
    });
    try {
      expect(await countsSeen(server.apiUrl)).toEqual(Array(8).fill(11));
      const cities = JSON.parse(readFileSync(join(KIT, 'cities11.json'), 'utf8')) as unknown[];
      await writeFile(data, JSON.stringify([...cities, makeCity(1000, { name: 'Watched' })]));
      for (let t = 0; t < 300 && !lines.some((line) => / changed: rebuilt/.test(line)); t++)
        await new Promise((r) => setTimeout(r, 100));
      expect(lines.join('\n')).toMatch(/ changed: rebuilt, now answered by 2 workers/);
      expect(await countsSeen(server.apiUrl)).toEqual(Array(8).fill(12));
    } finally {
      await server.close();
    }
  }, 120_000);

  it('a worker that dies is replaced, and the site is still answered', async () => {
    const server = await startCli([
      join(root, 'kill-site'),
      '--data',
      join(KIT, 'cities11.csv'),
      '--collation',
      'codepoint',
      '--orderings',
      'default',
      '--page-sizes',
      '10',
      '--port',
      '0',
      '--workers',
      '2',
    ]);
    try {
      const [victim] = workersOf(server.child.pid!);
      process.kill(Number(victim), 'SIGKILL');
      for (let t = 0; t < 100 && !/starting another/.test(server.output()); t++)
        await new Promise((r) => setTimeout(r, 100));
      await new Promise((r) => setTimeout(r, 1000));
      expect(workersOf(server.child.pid!)).toHaveLength(2);
      // The new worker too.
      for (const pid of workersOf(server.child.pid!))
        expect(flagsOf(pid)).toEqual(expect.arrayContaining([...ANSWERING_FLAGS]));
      expect(await countsSeen(`${server.url}/cities/`)).toEqual(Array(8).fill(11));
    } finally {
      await server.stop();
    }
  }, 120_000);
});
