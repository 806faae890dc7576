import { existsSync } from 'node:fs';

/**
 * Whether a test that needs an external tool can run. Locally a missing tool skips the test
 * with a loud message; in CI (CI=true) it fails instead, so a missing install step is seen.
 */
export function requireTool(name: string, path: string, install: string): boolean {
  if (existsSync(path)) return true;
  const message = `${name} not found at ${path}: install it with "${install}"`;
  if (process.env.CI === 'true') throw new Error(`${message} (CI must not skip this test)`);
  console.warn(`\n!!! SKIPPING ${name} tests: ${message} !!!\n`);
  return false;
}
