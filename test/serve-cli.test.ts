import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIT, tempDir } from './helpers.js';
import { startCli } from './serve-helpers.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-serve-cli-')));
afterAll(() => cleanup());

describe('cities-api serve as a process', () => {
  it('prints its URL, and stops cleanly on SIGTERM and SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const server = await startCli([join(root, 'site'), '--data', join(KIT, 'cities11.csv'), '--port', '0']);
      expect(server.output()).toMatch(
        // The first run builds the site first: its dataset line and progress come before the URL.
        /^serving .*site at http:\/\/127\.0\.0\.1:\d+\/cities\/ \(11 cities; links on http:\/\/127\.0\.0\.1:\d+\)$/m,
      );
      expect((await fetch(`${server.url}/cities/`)).status).toBe(200);
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', resolve));
      server.child.kill(signal);
      expect(await exited).toBe(0);
      expect(server.output()).toMatch(/stopped\n$/);
    }
  });

  it('a port in use is a clear error with exit code 1', async () => {
    const first = await startCli([join(root, 'site'), '--port', '0']);
    try {
      const port = new URL(first.url).port;
      const second = startCli([join(root, 'site'), '--port', port]);
      await expect(second).rejects.toThrow(
        new RegExp(`serve exited with 1:\\ncities-api: port ${port} on 127.0.0.1 is already in use`),
      );
    } finally {
      await first.stop();
    }
  });

  it('--writable without CITIES_API_TOKEN is refused with exit code 2', async () => {
    await expect(
      startCli([join(root, 'site'), '--data', join(KIT, 'cities11.csv'), '--writable', '--port', '0'], {
        CITIES_API_TOKEN: '',
      }),
    ).rejects.toThrow(/exited with 2:\ncities-api: --writable needs a token/);
  });
});
