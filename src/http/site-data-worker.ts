import { setPriority } from 'node:os';
import { Transferred } from '../proc/channel.js';
import { parentChannel } from '../proc/workers.js';
import { dataBuffers, readSiteData } from './site-data.js';
import type { SiteDataProtocol } from './site-data-thread.js';

// The thread a served site is read and ranked in (site-data-thread.ts). On Linux a thread has a
// nice value of its own: this one runs at the lowest priority, so that the threads answering
// requests (this process's and other workers') keep their CPU while it works.

try {
  setPriority(19);
} catch {
  // Not permitted here: it runs at the process's priority.
}

const parent = parentChannel<SiteDataProtocol>();
parent.handle('read', async ({ root, collation }) => {
  const data = await readSiteData(root, collation);
  return new Transferred(data, dataBuffers(data));
});
