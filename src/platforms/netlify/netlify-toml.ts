import { readFile } from 'node:fs/promises';
import { dirname, relative, resolve } from 'node:path';
import { CitiesApiError } from '../../core/errors.js';
import { readTomlString, tomlString } from '../../hosts/toml-text.js';

// netlify.toml is the user's: one file for both Netlify guides (docs/netlify.md's static site,
// built by Netlify or deployed with the CLI, and `edge netlify`'s edge function), which `edge
// netlify` writes once when missing and then only reads, to check that it publishes the site and
// finds the edge function where the command wrote it (Netlify's default directory).

/** The netlify.toml `edge netlify` writes when there is none: the site as the publish directory. */
export function netlifyToml(publish: string): string {
  return [
    '# Written once by cities-api edge netlify; yours to edit (it is never rewritten).',
    "# The edge function is found in netlify/edge-functions/, Netlify's default directory.",
    '[build]',
    `  publish = ${tomlString(publish, `the site's directory ${publish}`)}`,
    '',
  ].join('\n');
}

/** Refuses a netlify.toml that would deploy without the site or without the function, saying which line to change. */
export async function checkNetlifyToml(path: string, out: string, site: string): Promise<void> {
  const text = await readFile(path, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (text === null) return;
  const build = buildSection(text);
  const publish = stringKey(path, build, 'publish');
  const wanted = relative(out, site) || '.';
  if (publish === undefined || resolve(dirname(path), publish) !== resolve(site))
    throw new CitiesApiError(
      `${path} publishes ${publish === undefined ? 'no directory' : `"${publish}"`}, not the site ${site}: set publish = ${tomlString(wanted, `the site's directory ${wanted}`)} under [build] (the function answers from the site's files)`,
      2,
    );
  const functions = stringKey(path, build, 'edge_functions');
  if (functions !== undefined && resolve(dirname(path), functions) !== resolve(out, 'netlify/edge-functions'))
    throw new CitiesApiError(
      `${path} sets edge_functions = "${functions}", where cities-api's edge function is not: remove that line (Netlify's default, netlify/edge-functions, holds it)`,
      2,
    );
}

/** The lines of the `[build]` table (up to the next table header). */
function buildSection(text: string): string {
  const lines = text.split(/\r?\n/);
  const start = lines.findIndex((line) => /^\s*\[build\]\s*(#.*)?$/.test(line));
  if (start < 0) return '';
  const end = lines.findIndex((line, i) => i > start && /^\s*\[/.test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** A key's basic or literal string value in a TOML table's lines (`path`: the file, named in a refusal of a string TOML does not read). */
function stringKey(path: string, lines: string, key: string): string | undefined {
  const m = new RegExp(`^\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|'([^']*)')`, 'm').exec(lines);
  if (!m) return undefined;
  const text = m[2] ?? readTomlString(m[1]!);
  if (text === undefined)
    throw new CitiesApiError(
      `${path} sets ${key} to a string TOML does not read ("${m[1]}": a raw control character or an unknown escape): write it as TOML's basic strings allow, then run again`,
      2,
    );
  return text;
}
