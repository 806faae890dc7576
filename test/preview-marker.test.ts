import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropToken, newToken } from '../src/fs/lock-tokens.js';
import { markPreview } from '../src/app/preview-marker.js';
import { tempDir } from './helpers.js';

// A running preview says so in `.NAME.preview` beside its site; another one, on another URL, is
// refused while it runs. A marker of this process's pid is told live or dead as a draft's writer
// is (lock-holder.ts: isLiveWriter): by its token in the table the process's threads share, and a
// marker an older version wrote (its pid and URL alone) by its mtime. (Two previews in two threads: preview-deploy.test.ts.)

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('cities-preview-marker-')));
afterAll(() => cleanup());

/** No process has it: Linux's pids stay below pid_max, at most 2^22. */
const DEAD = 2 ** 22;
/** Before this process started (by more than process-start.ts's margin). */
const BEFORE_START = () => new Date(Date.now() - process.uptime() * 1000 - 60_000);
const OTHER = 'http://127.0.0.1:1';
const HERE = 'http://127.0.0.1:2';

let sites = 0;
/** A new site directory (its marker beside it: `.N.preview`). */
async function newSite(): Promise<string> {
  const site = join(root, String(++sites));
  await mkdir(site);
  return site;
}

/** A token this process's table gave and no holder has any more. */
const dropped = () => {
  const token = newToken();
  dropToken(token);
  return token;
};

interface Left {
  readonly what: string;
  /** The marker's fields (made as the case runs: a token is taken then), or the text of a file of its name. */
  readonly marker: () => object | string;
  /** Its mtime, set back; else written now. */
  readonly mtime?: Date;
  readonly refused: boolean;
  /** What has the marker's name is no marker: kept as it is, the preview unmarked. */
  readonly kept?: true;
  /** A directory has the marker's name, the text in a file inside. */
  readonly directory?: true;
}

const older = (pid: number) => () => ({ pid, url: OTHER });
const ours =
  (token: () => string, url = OTHER) =>
  () => ({ pid: process.pid, url, token: token() });

it.each<Left>([
  { what: "an older version's (pid and URL), another live process's", marker: older(process.ppid), refused: true },
  { what: "an older version's, a dead process's", marker: older(DEAD), refused: false },
  {
    what: "an older version's, this pid, written since this process started (a holder here)",
    marker: older(process.pid),
    refused: true,
  },
  {
    what: "an older version's, this pid, written before this process started (a dead process's, its pid reused)",
    marker: older(process.pid),
    mtime: BEFORE_START(),
    refused: false,
  },
  { what: 'this pid, a token a thread here holds', marker: ours(() => newToken()), refused: true },
  { what: 'this pid, a token released (its preview closed, its marker left)', marker: ours(dropped), refused: false },
  {
    what: 'this pid, a token of another table, written before this process started',
    marker: ours(() => '0.1'),
    mtime: BEFORE_START(),
    refused: false,
  },
  { what: 'a live preview on the same URL: nothing to rewrite', marker: ours(() => newToken(), HERE), refused: false },
  { what: "an empty one (an older version's, killed as it wrote it)", marker: () => '', refused: false },
  { what: "a file of its name that is no marker (a user's)", marker: () => 'notes\n', refused: false, kept: true },
  { what: 'JSON that is no marker', marker: () => '{"pid":"1"}\n', refused: false, kept: true },
  { what: 'a directory', marker: () => 'mine', directory: true, refused: false, kept: true },
])('a marker left beside the site, $what: refused $refused', async ({ marker, mtime, refused, kept, directory }) => {
  const site = await newSite();
  const file = join(root, `.${basename(site)}.preview`);
  const made = marker();
  const text = typeof made === 'string' ? made : `${JSON.stringify(made)}\n`;
  if (directory) await mkdir(file);
  await writeFile(directory ? join(file, 'keep') : file, text);
  if (mtime) await utimes(file, mtime, mtime);
  const read = () => readFile(directory ? join(file, 'keep') : file, 'utf8');
  const marking = markPreview(site, HERE);
  if (refused) {
    await expect(marking).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining(`running at ${OTHER}`),
    });
    expect(await read()).toBe(text);
    expect(await besideSite(site)).toEqual([basename(file)]);
    return;
  }
  const unmark = await marking;
  if (kept) expect(await read()).toBe(text);
  else
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({
      pid: process.pid,
      url: HERE,
      token: expect.any(String),
    });
  await unmark();
  // Nothing left beside the site: no draft, no lock; a file that is no marker as it was.
  if (kept) expect(await read()).toBe(text);
  expect(await besideSite(site)).toEqual(kept ? [basename(file)] : []);
});

/** The names beside `site` a preview could leave (`.N.*`). */
const besideSite = async (site: string) =>
  (await readdir(root)).filter((name) => name.startsWith(`.${basename(site)}.`)).sort();

describe('a preview of this thread', () => {
  it.each([
    ['running: a second on another URL is refused', false],
    ['closed: a second on another URL marks it', true],
  ])('%s', async (_, closed) => {
    const site = await newSite();
    const unmark = await markPreview(site, OTHER);
    if (closed) await unmark();
    const second = markPreview(site, HERE);
    if (closed) await (await second)();
    else await expect(second).rejects.toMatchObject({ exitCode: 2 });
    await unmark();
  });
});
