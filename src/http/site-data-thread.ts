import type { Collation } from '../core/collation.js';
import type { Silent } from '../proc/channel.js';
import { startThread } from '../proc/workers.js';
import type { SiteData } from './site-data.js';

/** The site-data thread's one call: read the site under `root` and rank it. */
export interface SiteDataProtocol {
  readonly parent: Silent;
  readonly worker: {
    readonly calls: { read(site: { root: string; collation: Collation }): SiteData };
    readonly events: Record<never, never>;
  };
}

/**
 * readSiteData() in a thread of its own, started for this one read (its heap freed whole when it
 * ends): the thread that answers requests only receives the result, in shared memory (sharedData),
 * not copied. A thread that fails or dies is an error here, as readSiteData's would be.
 */
export async function readSiteDataInThread(root: string, collation: Collation): Promise<SiteData> {
  const thread = startThread<SiteDataProtocol>('http/site-data-worker', {
    name: `the reading of ${root}`,
    lowest: true,
  });
  try {
    return await thread.call('read', { root, collation });
  } finally {
    await thread.stop();
  }
}
