import { createRequire } from 'node:module';

/** The package's version, recorded in every manifest: a new version rebuilds every page. */
export const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/**
 * What a build writes for the same version and input, numbered: raised when that changes between
 * releases (a development build keeps its version), so that a site built before is rebuilt. 2: a
 * host's fine blocks hold compact cities (d4506b1), where 1 (no number recorded) held their JSON.
 */
export const SITE_FORMAT = 2;
