import {
  closeSync,
  constants,
  type Stats,
  fstatSync,
  fsync,
  ftruncateSync,
  openSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { City } from '../core/fields.js';
import { cityJson } from '../core/json-text.js';
import { type DraftName, draftName } from '../fs/dead-drafts.js';
import { replaceThrough } from '../fs/through-draft.js';
import { fileSystemError, type PathRole, withPath } from '../fs/fs-error.js';
import { DATASET_SIDE_ROLE } from '../fs/lock.js';

/**
 * The write-ahead log of a writable server: the cities POSTs created that the dataset file does
 * not hold yet, `.NAME.wal` beside the dataset's real file. One line a city: its JSON, a tab, the
 * CRC-32 of the JSON in hex. A POST is acknowledged once its line is written and fsynced, which
 * takes a millisecond whatever the dataset's size (rewriting a 70 MB dataset takes a second);
 * the cities are folded into the dataset file later (logged-writer.ts). A write cut short (a
 * crash, a full disk) leaves a last line without its newline or with a wrong CRC: never
 * acknowledged, it is dropped, and the file cut back to its whole lines before the next append.
 */
export class CityLog {
  /** Its rewrites on their way (dropFirst): `.NAME.wal.tmp-PID.TOKEN` (dead-drafts.ts). */
  readonly drafts: DraftName;

  constructor(readonly path: string) {
    this.drafts = draftName(`${path}.tmp-`);
  }

  /** The log of the dataset whose real file (symlinks resolved) is `target`. */
  static of(target: string): CityLog {
    return new CityLog(join(dirname(target), `.${basename(target)}.wal`));
  }

  /** The whole records in the log, the bytes they take (what follows them is a torn write), and those bytes (`head`). */
  async read(): Promise<{ cities: City[]; bytes: number; head: Buffer }> {
    const text = await this.bytes();
    const cities: City[] = [];
    let bytes = 0;
    for (let start = 0; start < text.length; ) {
      const end = text.indexOf(0x0a, start);
      const city = end < 0 ? null : parseLine(text.toString('utf8', start, end));
      if (!city) break;
      cities.push(city);
      start = bytes = end + 1;
    }
    return { cities, bytes, head: text.subarray(0, bytes) };
  }

  /** Cuts the log back to its first `bytes` (dropping a torn write). */
  async cut(bytes: number): Promise<void> {
    if (!bytes) return this.remove();
    const handle = await open(this.path, WRITE).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw await this.named(error);
    });
    try {
      if (handle && (await handle.stat()).size > bytes) await handle.truncate(bytes);
    } catch (error) {
      throw await this.named(error);
    } finally {
      await handle?.close();
    }
  }

  /**
   * Appends the cities, in one write, and returns once they are on disk (fsync). On failure (a
   * full disk) the log is cut back to what it held, so nothing half-written stays. `texts`: the
   * cities serialized (cityJson), when the caller has them already.
   */
  async append(
    cities: readonly City[],
    texts: readonly string[] = cities.map((city) => cityJson(city)),
  ): Promise<void> {
    const lines = Buffer.from(texts.map((json) => line(json)).join(''));
    // All but the fsync synchronous: microseconds each, where libuv's thread pool, busy with a
    // build's writes, made each a millisecond or more (a POST waits for this append).
    // Never through a link planted under the log's name.
    let fd: number;
    try {
      fd = openSync(this.path, WRITE | constants.O_APPEND | constants.O_CREAT, 0o644);
    } catch (error) {
      throw await this.named(error);
    }
    try {
      const { size } = fstatSync(fd);
      try {
        // A short write is followed by another, which says why (EFBIG, ENOSPC).
        for (let done = 0; done < lines.length; ) done += writeSync(fd, lines, done);
        await fsyncOf(fd);
      } catch (error) {
        try {
          ftruncateSync(fd, size);
        } catch {}
        if (!size) rmSync(this.path, { force: true });
        throw error;
      }
    } catch (error) {
      throw await this.named(error);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Drops the first `bytes` (records now in the dataset file): the rest is written anew, fsynced,
   * and renamed over the log. On failure the copy is removed (half-written on a full disk, it held
   * the space it took until the next fold) and the log is left as it was.
   */
  async dropFirst(bytes: number): Promise<void> {
    const rest = (await this.bytes()).subarray(bytes);
    if (!rest.length) return this.remove();
    await replaceThrough(this.drafts, this.path, async (temp) => {
      const handle = await open(temp, WRITE | constants.O_CREAT | constants.O_EXCL, 0o644);
      try {
        await handle.write(rest);
        await handle.sync();
      } finally {
        await handle.close();
      }
    }).catch(async (error: unknown) => {
      throw await this.named(error);
    });
  }

  /** The log removed: a directory in its place (Node's ERR_FS_EISDIR) said as the dataset's, as any error of the log. */
  private remove(): Promise<void> {
    return rm(this.path, { force: true }).catch(async (error: unknown) => Promise.reject(await this.named(error)));
  }

  private async bytes(): Promise<Buffer> {
    const handle = await open(this.path, constants.O_RDONLY | constants.O_NOFOLLOW).catch(
      async (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw await this.named(error);
      },
    );
    try {
      return handle ? await handle.readFile() : Buffer.alloc(0);
    } catch (error) {
      throw await this.named(error);
    } finally {
      await handle?.close();
    }
  }

  /**
   * An error of the log (ENOSPC, EIO, EDQUOT from write, fsync or ftruncate carry no path: logged
   * as is, it named no file; a directory in its place) said with the log's path, as its dataset's
   * (`LOG (of the dataset FILE)`), and what to do. A log of no dataset's name (`.NAME.wal`) is said as a log.
   */
  private named(error: unknown): Promise<unknown> {
    const name = basename(this.path);
    const dataset = /^\..+\.wal$/.test(name) ? join(dirname(this.path), name.slice(1, -'.wal'.length)) : undefined;
    return dataset
      ? fileSystemError(withPath(error, this.path), DATASET_SIDE_ROLE, dataset)
      : fileSystemError(error, LOG_ROLE, this.path);
  }

  /** What identifies the log's content now (another process appending changes it). */
  async signature(): Promise<string> {
    let stats: Stats | null = null;
    try {
      stats = statSync(this.path);
    } catch {}
    return stats ? `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}` : 'none';
  }
}

const WRITE = constants.O_WRONLY | constants.O_NOFOLLOW;
const LOG_ROLE: PathRole = { what: "dataset's write-ahead log" };
const fsyncOf = promisify(fsync);

function line(json: string): string {
  return `${json}\t${crc32(json).toString(16).padStart(8, '0')}\n`;
}

function parseLine(text: string): City | null {
  const tab = text.lastIndexOf('\t');
  if (tab < 0) return null;
  const json = text.slice(0, tab);
  if (crc32(json).toString(16).padStart(8, '0') !== text.slice(tab + 1)) return null;
  try {
    return JSON.parse(json) as City;
  } catch {
    return null;
  }
}
