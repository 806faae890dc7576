import { checkLiveUrl } from './live-url.js';

// The live side as CloudFront names an origin: what the function's cf.updateRequestOrigin() is
// given (cloudfront.ts), and what the CloudFormation stack's origin is made from (cloudfront-stack.ts).

/** The argument of cf.updateRequestOrigin() that points a request at the live side. */
export function liveOrigin(liveUrl: string): Record<string, unknown> {
  const url = new URL(checkLiveUrl(liveUrl));
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
