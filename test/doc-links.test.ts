import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { headingAnchors, links, splitCode } from './markdown.js';
import { packedPaths, ROOT, shippedMarkdown } from './package-helpers.js';

// README.md and docs/ are read in a user's node_modules, on the registry's page, or on any
// host that renders Markdown: they must stand alone. Relative links stay inside the package;
// absolute URLs only name example hosts or placeholders (HOST, $host) (no vendor pages, no link to where this repository
// happens to live, nothing of the shared spec).

const packed = await packedPaths();
const shipped = new Set(packed);
const docs = await shippedMarkdown(packed);
const repoDocs = (await readdir(join(ROOT, 'docs'))).map((name) => `docs/${name}`).sort();

const EXAMPLE_HOST = /^(?:[\w-]+\.)*example\.(?:org|com|net)$|^localhost$|^127\.0\.0\.1$|^[A-Z][A-Z_]*$|^\$\w/;

describe('the documentation ships in the package', () => {
  it.each(['README.md', 'LICENSE', 'data/README.md', ...repoDocs])('%s', (path) => {
    expect(shipped.has(path)).toBe(true);
  });
});

const relativeLinks = docs.flatMap(({ path, text }) =>
  links(text)
    .filter((l) => !/^[a-z][\w+.-]*:/i.test(l.target))
    .map((l) => ({ name: `${path}:${l.line} → ${l.target}`, path, target: l.target })),
);

describe('every relative link resolves to a file that ships', () => {
  it('finds the links (README.md links to docs/)', () => {
    expect(relativeLinks.filter((l) => l.path === 'README.md' && l.target.startsWith('docs/')).length).toBeGreaterThan(
      3,
    );
  });

  it.each(relativeLinks)('$name', async ({ path, target }) => {
    const [file = '', anchor] = target.split('#');
    expect(target.startsWith('/'), 'no absolute paths').toBe(false);
    const resolved = file ? relative(ROOT, join(ROOT, dirname(path), decodeURI(file))) : path;
    expect(resolved.startsWith('..'), `${target} leaves the repository`).toBe(false);
    expect(existsSync(join(ROOT, resolved)), `${resolved} exists`).toBe(true);
    expect(shipped.has(resolved), `${resolved} ships in the package`).toBe(true);
    if (anchor !== undefined) {
      expect(resolved.endsWith('.md'), 'anchors only into Markdown').toBe(true);
      expect([...headingAnchors(await readFile(join(ROOT, resolved), 'utf8'))]).toContain(anchor);
    }
  });
});

const urls = docs.flatMap(({ path, text }) =>
  text
    .split('\n')
    .flatMap((line, i) =>
      [...line.matchAll(/\bhttps?:\/\/[^\s)`'"<>\]|]+/g)].map((m) => ({ name: `${path}:${i + 1} ${m[0]}`, url: m[0] })),
    ),
);

describe('absolute URLs, in prose and in code, name only example hosts', () => {
  it('finds the URLs', () => expect(urls.length).toBeGreaterThan(10));

  it.each(urls)('$name', ({ url }) => {
    const host = /^https?:\/\/([^/:?#]+)/.exec(url)![1]!;
    expect(host).toMatch(EXAMPLE_HOST);
  });
});

// Repository-only paths and commands: what a user of the package does not have.
const CLONE_ONLY = [
  ['a source module', /\bsrc\//],
  ['a test file', /\btest\//],
  ['a repository script', /\bscripts\//],
  ['the shared spec', /shared\//],
  ['the CLI by its path in a clone', /node\s+bin\//],
  ['an npm script of this repository', /npm\s+run\s/],
] as const;

/** What users read: docs/*.md whole, and the README up to its contributors' part. */
// data/README.md too: it ships, and must not point at a script that does not.
const userText = docs.map(({ path, text }) => ({
  path,
  text: path === 'README.md' ? text.slice(0, text.indexOf('\n## Contributing')) : text,
}));

describe('the user documentation shows nothing that only a clone of the repository has', () => {
  it("the README has a contributors' part after the users' one", () => {
    expect(docs.find((d) => d.path === 'README.md')!.text.indexOf('\n## Contributing')).toBeGreaterThan(1000);
  });

  const cases = userText.flatMap(({ path, text }) =>
    CLONE_ONLY.map(([what, pattern]) => ({ name: `${path}: no ${what}`, path, text, what, pattern })),
  );
  it.each(cases)('$name', ({ text, pattern }) => {
    const allowed = /clone of (?:this|the) repository/;
    // Each line with the next: a name wrapped across a line break (`npm run` / `bench:x`) is found too.
    const lines = text.split('\n');
    const offending = lines
      .map((line, i) => `${i + 1}: ${line} ${(lines[i + 1] ?? '').trimStart()}`)
      .filter((line) => pattern.test(line) && !allowed.test(line));
    expect(offending).toEqual([]);
  });

  it.each(userText)("$path: commands in code blocks are the package's (npx cities-api), not a clone's", ({ text }) => {
    const commands = splitCode(text)
      .blocks.flatMap((b) => b.text.split('\n'))
      .filter((line) => /cities-api(\.js)?\s/.test(line));
    expect(commands.filter((line) => /node\s+\S*bin\/cities-api|npm run build/.test(line))).toEqual([]);
  });
});
