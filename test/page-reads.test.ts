import { Session } from 'node:inspector/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { BlockReads } from '../src/site/edge-blocks.js';
import { PageReads } from '../src/site/edge-page-reads.js';
import { NeededIndices, runsOf, type LayoutBlocks } from '../src/site/edge-runs.js';

// What a page's reads hold for the whole answer (issue #25: memory per request). Objects made
// per block of the page when it starts outlive V8's young collections; in a server answering one
// page of every city after another, what survives those collections grows the young generation,
// between two collections of which more dead parts pile up (docs/deno.md). The page's setup keeps
// its per-block state in typed arrays (outside the JS heap): its heap does not grow with its blocks.

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

/** A layout of `blocks` blocks of `per` cities each. */
function layout(blocks: number, per: number): LayoutBlocks {
  const paths = Array.from({ length: blocks }, (_, b) => `rows/default-${b}.bin`);
  return {
    starts: Array.from({ length: blocks }, (_, b) => b * per),
    count: blocks * per,
    path: (b) => paths[b]!,
    full: per,
  };
}

const limits = {
  blocks: new BlockReads(async () => new Uint8Array(0), new Uint8Array(8), 6, {}),
  concurrency: 6,
  keepBlocks: 16,
  holdFiles: 16,
  scanBlocks: 16,
  holdsFiles: false,
};

/**
 * The JS heap (not ArrayBuffers' contents) a page of every city of `blocks` blocks holds once its
 * reads are set up: what V8's sampling heap profiler still counts after a full GC.
 */
async function heldBySetup(blocks: number): Promise<number> {
  const pages = layout(blocks, 50);
  const indices = Uint32Array.from({ length: pages.count }, (_, i) => i);
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 64 });
  const page = new PageReads(limits, pages, indices);
  gc();
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  expect(page.count).toBe(blocks);
  const sum = (node: typeof profile.head): number => node.selfSize + node.children.reduce((n, c) => n + sum(c), 0);
  return sum(profile.head);
}

describe('a page of every city set up to be read', () => {
  // Its code run once first: the bytecode and feedback made at a first call are no page's.
  beforeAll(() => heldBySetup(300));
  it.each([
    ['300 blocks (140k cities)', 300],
    ['3,000 blocks', 3000],
    ['10,000 blocks', 10_000],
  ])('%s: its reads hold under 40 KB of JS heap, whatever its blocks', async (_, blocks) => {
    // Before: a Map entry and two views per block (neededOf), Maps of each block's last run and uses,
    // a Set of the paths opened later, JS arrays of the runs: 77 KB at 300 blocks, 598 KB at 3,000,
    // 2.05 MB at 10,000.
    // The least of 3: what else the worker allocates meanwhile (the runner's messages) only adds (41.8 KB once in CI).
    const held = [await heldBySetup(blocks), await heldBySetup(blocks), await heldBySetup(blocks)];
    expect(Math.min(...held)).toBeLessThan(40_000);
  });
});

describe('the indices a page needs in each block', () => {
  const starts = [0, 10, 20, 30];
  it.each([
    [
      'a contiguous run over three blocks',
      [5, 6, 7, 8, 9, 10, 11, 12, 20],
      [0, 1, 2],
      [[5, 6, 7, 8, 9], [0, 1, 2], [0]],
    ],
    [
      'a block come back to, out of order',
      [25, 3, 27, 1, 21],
      [2, 0],
      [
        [1, 5, 7],
        [1, 3],
      ],
    ],
    ['one city in the last block', [39], [3], [[9]]],
  ] as const)('%s: listed ascending, per block in the order blocks first come', (_, indices, blocks, lists) => {
    const needed = new NeededIndices(runsOf(starts, indices), starts, indices);
    expect([...needed.blocks]).toEqual(blocks);
    expect(blocks.map((b) => [...needed.of(b)])).toEqual(lists);
    expect(blocks.map((b) => needed.size(b))).toEqual(lists.map((l) => l.length));
    expect([needed.size(1), needed.of(1).length].every((n) => n === 0 || blocks.includes(1 as never))).toBe(true);
  });
});
