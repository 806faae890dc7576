import { join } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { KIT, KIT_DATASETS, expectWholeKit, tempDir } from './helpers.js';
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
    const server = await startCli([
      join(root, name),
      '--data',
      join(KIT, `${name}.csv`),
      '--base-url',
      baseUrl,
      '--collation',
      'codepoint',
      '--port',
      '0',
    ]);
    try {
      await expectWholeKit(server.url, name, prefix, totals);
    } finally {
      await server.stop();
    }
  });
});

afterAll(() => {
  console.log(
    `conformance through cities-api serve: ${totals.passed} of ${totals.passed + totals.failed} answers match`,
  );
});
