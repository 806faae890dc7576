import { CitiesApiError } from '../core/errors.js';

// A live URL goes verbatim into configs that read some characters as syntax: nginx (`$name` is a
// variable, `;` ends a directive, quotes and braces), Netlify's _redirects (`:name` placeholders,
// `*` splats, spaces between fields) and CloudFront's origin fields (a DNS name, a plain path).
// Rather than escape for each, a live URL is refused unless, once normalized, it holds none of
// them: letters, digits and `-._~%/` in its path (anything else can be percent-encoded).

const HOST = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::[0-9]+)?$/;
const PATH = /^[A-Za-z0-9\-._~%/]*$/;

/** A live URL (`https://live.example.org/base`) normalized (no trailing slash), or a clear refusal (exit 2). */
export function checkLiveUrl(text: string): string {
  const refuse = (why: string) => new CitiesApiError(`invalid live URL "${text}": ${why}`, 2);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('expected e.g. https://live.example.org');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw refuse('only http and https are supported');
  if (url.search || url.hash || url.username || url.password)
    throw refuse('it must not carry a query, fragment or credentials');
  if (!HOST.test(url.host)) throw refuse(`its host ${url.host} is not a DNS name or IP address`);
  const path = url.pathname.replace(/\/+$/, '');
  checkLivePath(path, refuse);
  return `${url.protocol}//${url.host}${path}`;
}

/** A live path (`/.netlify/functions/x`) as it may go into a config, or a clear refusal (exit 2). */
export function checkLivePath(
  path: string,
  refuse = (why: string) => new CitiesApiError(`invalid live path "${path}": ${why}`, 2),
): string {
  if (PATH.test(path)) return path;
  const bad = [...path].find((c) => !PATH.test(c))!;
  const encoded = `%${bad.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
  throw refuse(`its path holds "${bad}", which nginx, Netlify or CloudFront would read as syntax; write it ${encoded}`);
}
