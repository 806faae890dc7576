import { Transferred } from '../proc/channel.js';
import { parentChannel } from '../proc/workers.js';
import { type IdsProtocol, recordsOf, sortedIds } from './file-ids.js';
import { readDataset } from './read-dataset.js';

// The thread fileIds() reads a large dataset file's ids in: its ids sorted here, handed over, not copied;
// with its records of the few ids asked for.

const parent = parentChannel<IdsProtocol>();

parent.handle('ids', async ({ file, wanted }) => {
  const table = await readDataset(file);
  const sorted = sortedIds(table.ids);
  return new Transferred({ sorted, records: recordsOf(table, wanted) }, [sorted.buffer as ArrayBuffer]);
});
