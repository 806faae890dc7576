import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KIT, KIT_DATASETS, tempDir } from './helpers.js';
import { startCli } from './serve-helpers.js';

// The whole conformance kit, every level, replayed by the kit's own runner (run.mjs) against a
// real `cities-api serve` process per dataset: 400 of 400 answers must match.
let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-kit-serve-')));
afterAll(() => cleanup());

const totals = { passed: 0, failed: 0 };

describe.each(KIT_DATASETS)('kit dataset $name through cities-api serve', ({ name, baseUrl, prefix }) => {
  it('every answer matches', async () => {
    const server = await startCli([join(root, name), '--data', join(KIT, `${name}.csv`), '--base-url', baseUrl, '--collation', 'codepoint', '--port', '0']);
    try {
      const args = [join(KIT, 'run.mjs'), server.url, join(KIT, `${name}.expected.jsonl`), ...(prefix ? ['--prefix', prefix] : [])];
      const { stdout } = await promisify(execFile)(process.execPath, args).catch((e: { stdout: string }) => e);
      const [, passed, failed] = /(\d+) passed, (\d+) failed\s*$/.exec(stdout) ?? [];
      totals.passed += Number(passed);
      totals.failed += Number(failed);
      expect(stdout.split('\n').filter((l) => l.startsWith('FAIL'))).toEqual([]);
      expect([Number(passed), Number(failed)]).toEqual([80, 0]);
    } finally {
      await server.stop();
    }
  });
});

afterAll(() => {
  console.log(`conformance through cities-api serve: ${totals.passed} of ${totals.passed + totals.failed} answers match`);
});
