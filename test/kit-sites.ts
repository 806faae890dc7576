import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

// vitest globalSetup of the integration and engines tiers: a directory for this run's kit sites,
// each built once by the first file that asks (edge-helpers.ts kitSite) and read in place by the
// others, removed when the run ends.

declare module 'vitest' {
  export interface ProvidedContext {
    kitSites: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'cities-kit-sites-'));
  project.provide('kitSites', dir);
  return () => rm(dir, { recursive: true, force: true });
}
