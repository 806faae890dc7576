import { lowestPriority, parentChannel } from '../proc/workers.js';
import { readSiteData, sharedData } from './site-data.js';
import type { SiteDataProtocol } from './site-data-thread.js';

// The thread a served site is read and ranked in (site-data-thread.ts), at the lowest priority
// (lowestPriority): the threads answering requests keep their CPU while it works.

lowestPriority();

const parent = parentChannel<SiteDataProtocol>();
parent.handle('read', async ({ root, collation }) => {
  return sharedData(await readSiteData(root, collation));
});
