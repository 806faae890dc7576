import { formatProblem, type Problem } from '../core/errors.js';

// A server builds its site again and again (serve --watch at each change of the dataset, a
// writable server at each catch-up): a warning of its settings alone (Problem.ofSettings: a base
// URL whose path Netlify would misread) would come at every build, the same each time.

/**
 * `onWarning` as a server's builds tell it: a warning of the settings alone the first time its text
 * comes (a new text is said: the settings changed), every other warning (of the data, of the
 * site's directory) each time, what it says being true of that build.
 */
export function settingsWarningsOnce(
  onWarning: ((warning: Problem) => void) | undefined,
): ((warning: Problem) => void) | undefined {
  if (!onWarning) return undefined;
  const said = new Set<string>();
  return (warning) => {
    const text = formatProblem(warning);
    if (warning.ofSettings && said.has(text)) return;
    if (warning.ofSettings) said.add(text);
    onWarning(warning);
  };
}
