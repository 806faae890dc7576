import { lstatSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Problem } from '../core/errors.js';
import { draftName } from '../fs/dead-drafts.js';
import { writeParts, type FileStat } from '../fs/file-output.js';
import { replaceThrough } from '../fs/through-draft.js';
import { siteSiblings } from '../fs/lock.js';
import {
  DIGEST_BYTES,
  FIELDS,
  FORMAT,
  FORMAT_PLAIN,
  MAGIC,
  PIECE_PATHS,
  SLOTS,
  TAIL,
  type DatasetRecord,
  type Slot,
} from './stat-cache-format.js';
import { foreignStatCache } from './stat-cache.js';

/** Records gathered while a site is assembled, by the file's ordinal (FileList), in blocks (never a doubled copy). */
export class StatRecords {
  private readonly blocks: Float64Array[] = [];
  /** Records of files linked from the old tree, as ordinal * 3 + slot (see settle). */
  private readonly linked: number[] = [];

  /** Records a file linked from the old tree: its ctime moves again when the old tree goes (settle). */
  setLinked(i: number, slot: Slot, stats: FileStat): void {
    this.set(i, slot, stats);
    this.linked.push(i * 3 + slot);
  }

  /**
   * Takes the ctime of each linked file again once the old tree is gone (a link made or removed
   * moves it). A file no longer showing the inode, size and mtime recorded keeps its old ctime:
   * the next build reads it.
   */
  settle(siteDir: string, name: (i: number, slot: Slot) => string): void {
    for (const key of this.linked) {
      const [i, slot] = [Math.floor(key / 3), (key % 3) as Slot];
      const block = this.blocks[Math.floor(i / PIECE_PATHS)]!;
      const at = (i % PIECE_PATHS) * SLOTS + slot * FIELDS;
      const now = lstatSync(join(siteDir, name(i, slot)), { throwIfNoEntry: false });
      if (now?.isFile() && block[at] === now.ino && block[at + 1] === now.size && block[at + 2] === now.mtimeMs)
        block[at + 3] = now.ctimeMs;
    }
  }

  set(i: number, slot: Slot, stats: FileStat): void {
    const block = Math.floor(i / PIECE_PATHS);
    while (this.blocks.length <= block) this.blocks.push(new Float64Array(PIECE_PATHS * SLOTS));
    this.blocks[block]!.set(
      [stats.ino, stats.size, stats.mtimeMs, stats.ctimeMs],
      (i % PIECE_PATHS) * SLOTS + slot * FIELDS,
    );
  }

  /**
   * Writes the cache of a site whose manifest lists the files of these ordinals (in its order)
   * and has `manifestStats`, a piece at a time, with the record of its dataset when known.
   */
  async write(siteDir: string, order: Uint32Array, manifestStats: FileStat, dataset?: DatasetRecord): Promise<void> {
    const { blocks } = this;
    const pieces: Iterable<Uint8Array> = {
      *[Symbol.iterator]() {
        yield new Uint8Array(
          new Float64Array([
            MAGIC,
            dataset ? FORMAT : FORMAT_PLAIN,
            order.length,
            manifestStats.ino,
            manifestStats.size,
            manifestStats.mtimeMs,
            manifestStats.ctimeMs,
          ]).buffer,
        );
        for (let from = 0; from < order.length; from += PIECE_PATHS) {
          const piece = new Float64Array(Math.min(PIECE_PATHS, order.length - from) * SLOTS);
          for (let n = 0; n * SLOTS < piece.length; n++) {
            const i = order[from + n]!;
            const block = blocks[Math.floor(i / PIECE_PATHS)];
            if (block) piece.set(block.subarray((i % PIECE_PATHS) * SLOTS, ((i % PIECE_PATHS) + 1) * SLOTS), n * SLOTS);
          }
          yield new Uint8Array(piece.buffer);
        }
        if (dataset) {
          const tail = new Float64Array(TAIL);
          tail[0] = dataset.cityBytes;
          new Uint8Array(tail.buffer, 8, DIGEST_BYTES).set(dataset.digest.subarray(0, DIGEST_BYTES));
          yield new Uint8Array(tail.buffer);
        }
      },
    };
    const { statCache } = siteSiblings(siteDir);
    await replaceThrough(statCacheDrafts(siteDir), statCache, (draft) => writeParts(draft, pieces));
  }
}

/** The drafts of a site's stat cache (`.NAME.stat-cache-PID.TOKEN`: dead-drafts.ts). */
export const statCacheDrafts = (siteDir: string) => draftName(`${siteSiblings(siteDir).statCache}-`);

/**
 * Writes the site's stat cache (`write`: StatRecords.write) unless its name holds what no build
 * wrote (a directory, a link, someone's file): that is left as it is, nothing written beside it,
 * and `onWarning` told what to do. A cache that cannot be written is removed (the old one would
 * describe another build), never what is not a cache.
 */
export async function writeStatCache(
  siteDir: string,
  onWarning: ((warning: Problem) => void) | undefined,
  write: () => Promise<void>,
): Promise<void> {
  const { statCache } = siteSiblings(siteDir);
  const foreign = await foreignStatCache(siteDir).catch(
    (error: NodeJS.ErrnoException) => `unreadable (${error.code ?? error.message})`,
  );
  if (foreign === null) return write().catch(() => rm(statCache, { force: true }).catch(() => undefined));
  onWarning?.({
    file: statCache,
    reason: `${foreign} where a build keeps its stat cache (its record of the site's files): left as it is, so every build reads all the site's files again; move it aside or delete it`,
  });
}
