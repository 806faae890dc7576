import { CitiesApiError, optionNamed, type Problem } from '../core/errors.js';
import { ROUTES } from '../core/route-table.js';
import { cloudFrontLeftOutBy, cloudFrontUnreachable } from '../site/extras.js';
import type { SiteSettings } from '../site/spec.js';
import { checkLiveUrl } from './live-url.js';

// The live side as CloudFront names an origin: what the function's cf.updateRequestOrigin() is
// given (cloudfront.ts), and what the CloudFormation stack's origin is made from (cloudfront-stack.ts).

/**
 * The argument of cf.updateRequestOrigin() that points a request at the live side; refused (exit 2)
 * where CloudFront cannot take its host as an origin (site/extras.ts: an IP address).
 */
export function liveOrigin(liveUrl: string): Record<string, unknown> {
  const url = new URL(checkLiveUrl(liveUrl));
  const unreachable = cloudFrontUnreachable(url.href);
  if (unreachable !== undefined) throw new CitiesApiError(noOrigin(url, unreachable), 2);
  const https = url.protocol === 'https:';
  const path = url.pathname.replace(/\/+$/, '');
  return {
    domainName: url.hostname,
    ...(path ? { originPath: path } : {}),
    customOriginConfig: {
      port: Number(url.port || (https ? 443 : 80)),
      protocol: https ? 'https' : 'http',
      sslProtocols: ['TLSv1.2'],
    },
    // The S3 origin's origin access control would otherwise be inherited and sign live requests.
    originAccessControlConfig: { enabled: false },
  };
}

/** Why a live URL cannot be CloudFront's origin, and what to do. */
const noOrigin = (url: URL, host: string) =>
  `the live URL ${checkLiveUrl(url.href)} has no DNS name (${host}): CloudFront's origins need one (a Lambda function URL, or a name with a certificate CloudFront trusts); give one with ${optionNamed('liveUrl')}`;

/** What a build says of a site that leaves out its CloudFront Function, its live URL being no DNS name; or undefined. */
export function cloudFrontLeftOut(settings: Pick<SiteSettings, 'liveUrl' | 'host'>): Problem | undefined {
  const host = cloudFrontLeftOutBy(settings);
  if (host === undefined) return undefined;
  return {
    reason: `the site leaves out its CloudFront Function (${ROUTES.extras.cloudfront}): ${noOrigin(new URL(settings.liveUrl!), host)}`,
    ofSettings: true,
  };
}
