import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';

// What a site records of the dataset file it was built from (beside it, in the stat cache): a
// SHA-256 of the file's format and bytes. A rebuild finding the same digest in the file knows
// its cities are the site's without parsing and validating them again (when its files are as built).

/** A hash to feed the dataset file's bytes, in order, as they are read. */
export function datasetHash(format: '.csv' | '.json'): Hash {
  return createHash('sha256').update(`cities-api dataset ${format}\n`);
}

/** The digest of a dataset file of this format (checked to be a regular file), read a chunk at a time. */
export async function digestFile(
  file: string,
  format: '.csv' | '.json',
  onChunk?: (bytesRead: number) => void,
): Promise<Buffer> {
  const hash = datasetHash(format);
  let read = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    onChunk?.((read += chunk.length));
  }
  return hash.digest();
}
