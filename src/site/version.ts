import { createRequire } from 'node:module';

/** The package's version, recorded in every manifest: a new version rebuilds every page. */
export const VERSION: string = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
