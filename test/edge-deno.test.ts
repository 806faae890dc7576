import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIT_DATASETS, expectWholeKit, tempDir } from './helpers.js';
import { expectPagesAsFiles, kitEdgeProject } from './edge-helpers.js';
import { requireTool } from './tool-check.js';

// `cities-api edge deno` under a real `deno serve` (the npm `deno` package's binary): the whole kit,
// every level (400/400), and every built page byte for byte, all computed from the site's edge files.

const DENO = join(import.meta.dirname, '..', 'node_modules', '.bin', 'deno');
const available = requireTool('deno', DENO, 'npm ci (deno is a dev dependency)');

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-edge-deno-')));
afterAll(() => cleanup());

/** The project's deploy command (`deno serve --allow-read=SITE main.js`) on a free port: its URL once it listens. */
async function denoServe(dir: string, deploy: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const [, serve, ...args] = deploy.split(' ');
  const child = spawn(DENO, [serve!, '--host', '127.0.0.1', '--port', '0', ...args], { cwd: dir, env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`deno serve did not start:\n${output}`)), 60_000);
    const read = (d: Buffer) => {
      output += d;
      const m = /Listening on (http:\/\/[^\s/]+)/.exec(output);
      if (m) { clearTimeout(timer); resolve(m[1]!); }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`deno serve exited with ${code}:\n${output}`)); });
  });
  const stop = () => new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  return { url, stop };
}

const totals = { passed: 0, failed: 0, pages: 0 };

describe.skipIf(!available).each(KIT_DATASETS)('kit dataset $name through deno serve', ({ name, baseUrl, prefix }) => {
  it('every kit answer matches and every page equals its file', async () => {
    const { site, project } = await kitEdgeProject(root, name, baseUrl, 'deno');
    expect(project.deploy).toBe('deno serve --allow-read=../site/ main.js');
    const server = await denoServe(project.out, project.deploy);
    try {
      await expectWholeKit(server.url, name, prefix, totals);
      await expectPagesAsFiles(server.url, site, baseUrl, totals);
    } finally {
      await server.stop();
    }
  }, 600_000);
});

afterAll(() => {
  if (available) console.log(`conformance through deno serve: ${totals.passed} of ${totals.passed + totals.failed} answers match; ${totals.pages} page files byte-identical`);
});
