import { Transferred } from '../proc/channel.js';
import { parentChannel } from '../proc/workers.js';
import { type IdsProtocol, sortedIds } from './file-ids.js';
import { readDataset } from './read-dataset.js';

// The thread fileIds() reads a large dataset file's ids in: its ids sorted here, handed over, not copied.

const parent = parentChannel<IdsProtocol>();

parent.handle('ids', async (file) => {
  const { ids } = await readDataset(file);
  const own = sortedIds(ids);
  return new Transferred(own, [own.buffer as ArrayBuffer]);
});
