import { parentChannel } from '../proc/workers.js';
import { readSiteData, sharedData } from './site-data.js';
import type { SiteDataProtocol } from './site-data-thread.js';

// The thread a served site is read and ranked in (site-data-thread.ts), started at the lowest
// priority (startThread's `lowest`): the threads answering requests keep their CPU while it works.
// It reads the site's files on itself (`sync`), not through libuv's threads, which run at theirs.

const parent = parentChannel<SiteDataProtocol>();
parent.handle('read', async ({ root, collation, into }) => {
  const data = sharedData(await readSiteData(root, collation, 'sync', into));
  return { data, into: into !== undefined && data.memory === into };
});
