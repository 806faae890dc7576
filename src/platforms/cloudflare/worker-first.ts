import { CitiesApiError } from '../../core/errors.js';

// wrangler.jsonc's run_worker_first: the paths for which the Worker runs before the assets.
// Cloudflare matches each rule against the request URL's pathname as WHATWG's URL parser spells
// it, undecoded, reading `*` as any text and every other character as itself (workers-shared's
// generateGlobOnlyRuleRegExp); wrangler refuses a rule over 100 characters.

const MAX_RULE = 100;

/**
 * The rules for the endpoint (its path as links write it, ending in /): each spelling of that path,
 * without and with its slash and what is under it. Refuses a path holding `*` (no escape turns it
 * into text: the rules would run the Worker for other paths) and one whose rules wrangler refuses.
 */
export function workerFirstRules(endpoint: string): string[] {
  const again = 'build the site with another base URL (--base-url), or deploy it elsewhere';
  if (endpoint.includes('*'))
    throw new CitiesApiError(
      `the endpoint's path ${endpoint} holds '*', which Cloudflare's run_worker_first reads as any text and has no escape for: the Worker would run for other paths (${endpoint.replaceAll('*', 'x')} too). ${again}`,
      2,
    );
  // As links write it, and as a client's URL parser spells the characters themselves (`[`, `^`, `|` raw).
  // Typed, `%`, `?`, `#` and `\` would be read as something else: those stay escaped.
  const typed = decodeURIComponent(endpoint).replace(/[%?#\\]/g, encodeURIComponent);
  const spellings = new Set([endpoint, new URL(`http://host${typed}`).pathname]);
  const rules = [...spellings].flatMap((path) => [path.slice(0, -1), `${path}*`]);
  const long = rules.find((rule) => rule.length > MAX_RULE);
  if (long)
    throw new CitiesApiError(
      `the endpoint's path ${endpoint} makes the run_worker_first rule ${long} (${long.length} characters), above the ${MAX_RULE} wrangler takes: ${again}`,
      2,
    );
  return rules;
}
