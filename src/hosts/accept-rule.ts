import { ROUTES } from '../core/route-table.js';

// The route table's rule for which Accept headers a file can answer, as each host needs it:
// ranges as DRF reads them (case-insensitive, split on commas, spaces and tabs around them);
// a range with parameters or with bytes beyond printable ASCII is left to the live side, which
// reads it exactly.

const escape = (range: string) => range.replace(/[*.]/g, '\\$&');
const ranges = (list: readonly string[]) => `(^|,)[ \\t]*(${list.map(escape).join('|')})[ \\t]*(,|$)`;

/** Case-insensitive regular expressions over the whole header: `live` sends it live when it matches, `json` must match (an empty header does). */
export function acceptRegexes(): { readonly live: string; readonly json: string } {
  return { live: `${ranges(ROUTES.accept.html)}|;|[^\\t\\x20-\\x7e]`, json: `^$|${ranges(ROUTES.accept.json)}` };
}
