import { ROUTES } from '../core/route-table.js';
import type { Host, SiteSpec } from './spec.js';

// Which of the route table's extras (manifest, dataset, host configs, ...) a site holds besides its
// pages: the build writes these (app/site-entries.ts) and counts them (size.ts), and the hosts
// layer refuses to make Netlify's files for a base path that this says they cannot hold.

export type Extra = keyof typeof ROUTES.extras;

/** Other hosts' files, which a site built for one host (`--for`) leaves out: wrangler reads a site's `_redirects` and `_headers` as Cloudflare's own. */
const OTHER_HOSTS: Readonly<Record<Host, readonly Extra[]>> = {
  cloudflare: ['cloudfront', 'netlifyRedirects', 'netlifyHeaders'],
};

/**
 * Netlify's files written on the endpoint's path, base path included, which such a site leaves out.
 * (Its `_redirects` stays, holding only the rules that hide the site's own files under
 * `_cities-api/`: their paths hold no base path.)
 */
const NETLIFY: readonly Extra[] = ['netlifyHeaders'];

/** White space, which ends a path in Netlify's files (their lines are split on it), and control characters. */
export const NETLIFY_UNWRITABLE = /[\s\p{Cc}]/u;

/**
 * The first segment of a base path (`mount`, decoded as requests are matched) that Netlify's
 * `_redirects` and `_headers` read as their syntax, or undefined: one that starts with `:` (a
 * placeholder: `/:v1/api` matches `/v2/api`), holds `*` (a wildcard), or white space or a control
 * character (NETLIFY_UNWRITABLE: a space ends the rule's path, a line end starts another rule). Netlify
 * matches a request's path decoded and decodes no escape in a rule (a rule of `/%3Av1` or `/a%20b`
 * matches no request), so no rule of theirs can name such a path. A `:` inside a segment (`/a:b`),
 * and `[`, `^`, `|`, `(`, `.`, `+`, `$`, `%`... anywhere, are their literal text.
 */
export function netlifySyntaxSegment(mount: string): string | undefined {
  return mount.split('/').find((part) => part.startsWith(':') || part.includes('*') || NETLIFY_UNWRITABLE.test(part));
}

/** A CloudFront origin's domain name, up to 253 characters (nothing that would end the function's string literal). */
export const CLOUDFRONT_ORIGIN_NAME = '^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$';

/**
 * The host of a live URL that CloudFront cannot take as an origin, or undefined: its origins are
 * domain names, never an IP address (CloudFront refuses `10.0.0.5` or `[::1]` as a domain name).
 * The CloudFront Function a site holds (which such a site leaves out), `config cloudfront` and the
 * stack all ask this.
 */
export function cloudFrontUnreachable(liveUrl: string | null | undefined): string | undefined {
  if (!liveUrl) return undefined;
  let hostname: string;
  try {
    ({ hostname } = new URL(liveUrl));
  } catch {
    return undefined; // not a URL: refused by checkLiveUrl, which every config calls first
  }
  return new RegExp(CLOUDFRONT_ORIGIN_NAME).test(hostname) && !/^[0-9.]+$/.test(hostname) ? undefined : hostname;
}

/** The extras of a site for `host` (absent: for every host) whatever its base path. */
function hostExtras(host: Host | undefined): Extra[] {
  return (Object.keys(ROUTES.extras) as Extra[]).filter((name) => !host || !OTHER_HOSTS[host].includes(name));
}

/**
 * The route table's extras a site holds besides its pages: not another host's (a site for one
 * host), nor Netlify's where they would misread its base path (netlifySyntaxSegment), nor the
 * CloudFront Function where its live URL cannot be a CloudFront origin (cloudFrontUnreachable).
 */
export function siteExtras(site: Pick<SiteSpec, 'host' | 'mount'> & Partial<Pick<SiteSpec, 'liveUrl'>>): Extra[] {
  const misread = netlifySyntaxSegment(site.mount) !== undefined;
  // Sized (size.ts) carries the live URL: a site left without the function is counted without it.
  const originless = cloudFrontUnreachable(site.liveUrl) !== undefined;
  return hostExtras(site.host).filter(
    (name) => !(misread && NETLIFY.includes(name)) && !(originless && name === 'cloudfront'),
  );
}

/** The live URL's host for which a site leaves out the CloudFront Function it would otherwise hold, or undefined. */
export function cloudFrontLeftOutBy(site: Pick<SiteSpec, 'host' | 'liveUrl'>): string | undefined {
  return hostExtras(site.host).includes('cloudfront') ? cloudFrontUnreachable(site.liveUrl) : undefined;
}

/** The segment of its base path for which a site leaves out the Netlify rules it would otherwise hold, or undefined. */
export function netlifyLeftOutBy(site: Pick<SiteSpec, 'host' | 'mount'>): string | undefined {
  return hostExtras(site.host).some((name) => NETLIFY.includes(name)) ? netlifySyntaxSegment(site.mount) : undefined;
}
