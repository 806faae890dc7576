import { constants } from 'node:fs';
import { open, readFile, rename, rm, stat, truncate } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { City } from '../core/fields.js';
import { cityJson } from '../core/json-text.js';

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
  constructor(readonly path: string) {}

  /** The log of the dataset whose real file (symlinks resolved) is `target`. */
  static of(target: string): CityLog {
    return new CityLog(join(dirname(target), `.${basename(target)}.wal`));
  }

  /** The whole records in the log, and the bytes they take (what follows them is a torn write). */
  async read(): Promise<{ cities: City[]; bytes: number }> {
    const text = await readFile(this.path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return Buffer.alloc(0);
      throw error;
    });
    const cities: City[] = [];
    let bytes = 0;
    for (let start = 0; start < text.length; ) {
      const end = text.indexOf(0x0a, start);
      const city = end < 0 ? null : parseLine(text.toString('utf8', start, end));
      if (!city) break;
      cities.push(city);
      start = bytes = end + 1;
    }
    return { cities, bytes };
  }

  /** Cuts the log back to its first `bytes` (dropping a torn write). */
  async cut(bytes: number): Promise<void> {
    await truncate(this.path, bytes).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }

  /** Appends the cities, in one write, and returns once they are on disk (fsync). */
  async append(cities: readonly City[]): Promise<void> {
    const lines = cities.map((city) => line(city)).join('');
    const handle = await open(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o644);
    try {
      await handle.write(lines);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  /** Drops the first `bytes` (records now in the dataset file): the rest is written anew, fsynced, and renamed over the log. */
  async dropFirst(bytes: number): Promise<void> {
    const rest = (await readFile(this.path).catch(() => Buffer.alloc(0))).subarray(bytes);
    if (!rest.length) {
      await rm(this.path, { force: true });
      return;
    }
    const temp = `${this.path}.tmp-${process.pid}`;
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o644);
    try {
      await handle.write(rest);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, this.path);
  }

  /** What identifies the log's content now (another process appending changes it). */
  async signature(): Promise<string> {
    const stats = await stat(this.path).catch(() => null);
    return stats ? `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}` : 'none';
  }
}

function line(city: City): string {
  const json = cityJson(city);
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
