import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

// vitest globalSetup of the integration and engines tiers: a directory for this run's kit sites,
// each built once by the first file that asks (edge-helpers.ts kitSite) and read in place by the
// others, removed when the run ends. One directory for both tiers (they run at once in `npm test`):
// a kit site is built once per run, not once per tier.

declare module 'vitest' {
  export interface ProvidedContext {
    kitSites: string;
  }
}

/** The run's directory and how many tiers use it; on globalThis, whichever module instance each tier's setup loads. */
const SHARED = Symbol.for('cities-api.test.kitSites');
type Shared = { dir: Promise<string>; users: number };
const holder = globalThis as { [SHARED]?: Shared };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  holder[SHARED] ??= { dir: mkdtemp(join(tmpdir(), 'cities-kit-sites-')), users: 0 };
  const shared = holder[SHARED];
  shared.users++;
  const dir = await shared.dir;
  project.provide('kitSites', dir);
  return async () => {
    if (--shared.users > 0) return;
    delete holder[SHARED];
    await rm(dir, { recursive: true, force: true });
  };
}
