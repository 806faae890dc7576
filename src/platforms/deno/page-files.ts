import type { PageFile } from '../../http/page-file.js';

// A site's page file opened for `deno serve` to send (http/page-file.ts): a Response whose body is an
// opened file's `readable` is piped by Deno's server in Rust, with no JavaScript array per part, and
// the file is closed when the body ends or the client goes away. Only a file of the site's own tree
// is sent: reached through no symbolic link below the site's directory (which may itself be one), as
// `cities-api serve` sends a file; anything else is computed. On Deno Deploy the path is the same:
// where the site's pages were not uploaded, the open fails and the page is computed.

/** What of a file's stat the server reads (Deno.FileInfo); a stand-in may give the size alone. */
export interface DenoFileInfo {
  readonly size: number;
  readonly ino?: number | null;
  readonly dev?: number;
}

/** A file opened with `Deno.open` (Deno.FsFile). */
export interface DenoFile {
  read(into: Uint8Array): Promise<number | null>;
  seek(offset: number, whence: 0): Promise<number>;
  stat(): Promise<DenoFileInfo>;
  close(): void;
  /** The file's bytes from where it is, the file closed at their end or once cancelled. */
  readonly readable?: ReadableStream<Uint8Array>;
}

/** The part of the `Deno` namespace a page file needs. */
export interface DenoPageFiles {
  open(path: URL): Promise<DenoFile>;
  lstat(path: URL): Promise<DenoFileInfo>;
  realPath(path: URL): Promise<string>;
}

/**
 * The real path of the site `files`, looked up once per build (`tag`, the edge index's): a rebuild
 * that moves the site (its directory replaced by a link elsewhere) is looked up again. A stale one
 * never lets a file through: the page's directory would not be found inside it (computed instead).
 */
export function siteRoot(deno: Pick<DenoPageFiles, 'realPath'>, files: URL): (tag: string) => Promise<string> {
  let last: { readonly tag: string; readonly root: Promise<string> } | undefined;
  return (tag) => {
    if (last?.tag === tag) return last.root;
    const root = deno.realPath(files);
    last = { tag, root };
    // A failed lookup is not kept.
    root.catch(() => last?.root === root && (last = undefined));
    return root;
  };
}

/** The file at `path` in the site `files` (a URL ending in /, whose real path is `root`), or null (closed) where it is not the site's own file. */
export async function sitePageFile(
  deno: DenoPageFiles,
  files: URL,
  path: string,
  root: Promise<string>,
): Promise<PageFile | null> {
  const url = new URL(path, files);
  const dir = path.slice(0, path.lastIndexOf('/'));
  const file = await deno.open(url);
  try {
    const [own, named, real] = await Promise.all([
      file.stat(),
      deno.lstat(url),
      deno.realPath(new URL(`${dir}/`, files)),
    ]);
    // The path names the file opened (not a link to it, nor replaced since), in the site's own directories.
    const site = await root;
    const inside = dir === '' ? real === site : real === `${site.replace(/\/$/, '')}/${dir}`;
    // `readable` asked for once the head is read (Deno makes its stream then: the head's reads come first).
    const streams = 'readable' in file;
    // A link's lstat is the link's own inode, never its target's.
    if (streams && named.ino === own.ino && named.dev === own.dev && inside)
      return { head: (length) => head(file, length), readable: () => file.readable!, close: () => file.close() };
  } catch (error) {
    file.close();
    throw error;
  }
  file.close();
  return null;
}

/** The file's first `length` bytes, the file then at its start again (where `readable` starts). */
async function head(file: DenoFile, length: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(length);
  let filled = 0;
  while (filled < length) {
    const n = await file.read(bytes.subarray(filled));
    if (n === null) break;
    filled += n;
  }
  await file.seek(0, 0);
  return bytes.subarray(0, filled);
}
