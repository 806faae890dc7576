import { ROUTES } from '../core/route-table.js';
import { normalizeBaseUrl, type SiteSpec } from '../site/spec.js';
import type { YamlValue } from './yaml-text.js';

// The distribution of the CloudFront stack (cloudfront-stack.ts) and its policies: every request
// goes through the site's function on viewer-request to the S3 origin (origin access control) or,
// with a live origin, to an origin group that fails over from S3 to it on S3's 403/404; the cache
// and response-headers policies are those docs/cloudfront.md explains. Static-only, S3's 403 for a
// key the site lacks becomes the "Not precomputed" 404 (a custom error response).

/** CloudFront's managed CachingOptimized policy: the rewritten URI alone is the cache key. */
export const CACHING_OPTIMIZED = '658327ea-f89d-4fab-a63d-7e88639e58f6';
/** S3's statuses for a key it does not hold (403 without s3:ListBucket), on which the origin group fails over. */
export const FAILOVER_STATUSES = [403, 404];
/** The stack's parameter holding the live origin's host. */
export const LIVE_PARAMETER = 'LiveOriginDomain';
const ORIGIN = { s3: 's3', live: 'live', group: 's3-then-live' };

/** The condition under which the distribution answers at the base URL's host (a certificate was given). */
export const HAS_CERTIFICATE = 'HasCertificate';

/** The base URL's host when CloudFront can answer at it as an alternate domain name (not its own domain, an IP, localhost or a port). */
export function aliasOf(baseUrl: string): string | null {
  const url = new URL(baseUrl);
  const host = url.hostname;
  if (url.port || !host.includes('.') || /^[0-9.]+$|^\[|\.cloudfront\.net$/.test(host)) return null;
  return host;
}

/** A name unique in the account: the stack's name and a suffix. */
export function stackNamed(suffix: string): YamlValue {
  return { 'Fn::Sub': `\${AWS::StackName}-${suffix}` };
}

/** The cache policy (with a live origin), the response-headers policy and the distribution. */
export function distributionResources(
  spec: Pick<SiteSpec, 'baseUrl'>,
  live: Record<string, unknown> | null,
): { [key: string]: YamlValue } {
  const alias = aliasOf(spec.baseUrl);
  const ifCertificate = (value: YamlValue) => ({ 'Fn::If': [HAS_CERTIFICATE, value, { Ref: 'AWS::NoValue' }] });
  const s3Origin = {
    Id: ORIGIN.s3,
    DomainName: { 'Fn::GetAtt': ['Bucket', 'RegionalDomainName'] },
    OriginAccessControlId: { 'Fn::GetAtt': ['OriginAccessControl', 'Id'] },
    S3OriginConfig: { OriginAccessIdentity: '' },
  };
  const origins: YamlValue[] = live ? [s3Origin, liveOriginOf(live)] : [s3Origin];
  return {
    ...(live && {
      CachePolicy: {
        Type: 'AWS::CloudFront::CachePolicy',
        Properties: {
          CachePolicyConfig: {
            Name: stackNamed('cities-api'),
            Comment: 'The query and Accept decide a live answer; gzip and brotli keyed (the API varies on Accept only)',
            MinTTL: 0,
            DefaultTTL: 60,
            MaxTTL: 31536000,
            ParametersInCacheKeyAndForwardedToOrigin: {
              EnableAcceptEncodingGzip: true,
              EnableAcceptEncodingBrotli: true,
              QueryStringsConfig: { QueryStringBehavior: 'all' },
              HeadersConfig: { HeaderBehavior: 'whitelist', Headers: [ROUTES.header.accept] },
              CookiesConfig: { CookieBehavior: 'none' },
            },
          },
        },
      },
    }),
    ResponseHeadersPolicy: {
      Type: 'AWS::CloudFront::ResponseHeadersPolicy',
      Properties: { ResponseHeadersPolicyConfig: { Name: stackNamed('cities-api'), ...responseHeaders() } },
    },
    Distribution: {
      Type: 'AWS::CloudFront::Distribution',
      Properties: {
        DistributionConfig: {
          Comment: `cities-api ${normalizeBaseUrl(spec.baseUrl)}${ROUTES.endpoint}`,
          Enabled: true,
          HttpVersion: 'http2and3',
          IPV6Enabled: true,
          PriceClass: { Ref: 'PriceClass' },
          ...(alias && {
            Aliases: ifCertificate([alias]),
            ViewerCertificate: ifCertificate({
              AcmCertificateArn: { Ref: 'CertificateArn' },
              SslSupportMethod: 'sni-only',
              MinimumProtocolVersion: 'TLSv1.2_2021',
            }),
          }),
          Origins: origins,
          ...(live && {
            OriginGroups: {
              Quantity: 1,
              Items: [
                {
                  Id: ORIGIN.group,
                  FailoverCriteria: { StatusCodes: { Quantity: FAILOVER_STATUSES.length, Items: FAILOVER_STATUSES } },
                  Members: { Quantity: 2, Items: [{ OriginId: ORIGIN.s3 }, { OriginId: ORIGIN.live }] },
                },
              ],
            },
          }),
          DefaultCacheBehavior: {
            TargetOriginId: live ? ORIGIN.group : ORIGIN.s3,
            ViewerProtocolPolicy: 'redirect-to-https',
            Compress: true,
            // An origin group takes only the methods it can fail over (POST goes to the live URL itself).
            AllowedMethods: live ? ['GET', 'HEAD', 'OPTIONS'] : ['GET', 'HEAD'],
            CachedMethods: ['GET', 'HEAD'],
            CachePolicyId: live ? { Ref: 'CachePolicy' } : CACHING_OPTIMIZED,
            ResponseHeadersPolicyId: { Ref: 'ResponseHeadersPolicy' },
            FunctionAssociations: [
              { EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': ['RouterFunction', 'FunctionARN'] } },
            ],
          },
          ...(!live && {
            CustomErrorResponses: [
              {
                ErrorCode: 403,
                ResponseCode: 404,
                ResponsePagePath: `/${ROUTES.extras.notPrecomputed}`,
                ErrorCachingMinTTL: 10,
              },
            ],
          }),
        },
      },
    },
  };
}

/** The live origin on the distribution: what the function's cf.updateRequestOrigin() names, its host the parameter. */
function liveOriginOf(live: Record<string, unknown>): YamlValue {
  const config = live.customOriginConfig as { port: number; protocol: string; sslProtocols: string[] };
  const https = config.protocol === 'https';
  return {
    Id: ORIGIN.live,
    DomainName: { Ref: LIVE_PARAMETER },
    ...(live.originPath ? { OriginPath: String(live.originPath) } : {}),
    CustomOriginConfig: {
      OriginProtocolPolicy: https ? 'https-only' : 'http-only',
      [https ? 'HTTPSPort' : 'HTTPPort']: config.port,
      OriginSSLProtocols: config.sslProtocols,
    },
  };
}

/** CloudFront's own settings for some of Django's security headers, named as the header without `X-` and dashes. */
const SECURITY_SETTINGS: { [setting: string]: (value: string) => YamlValue | undefined } = {
  FrameOptions: (value) => ({ FrameOption: value, Override: false }),
  ReferrerPolicy: (value) => ({ ReferrerPolicy: value, Override: false }),
  ContentTypeOptions: (value) => (value === 'nosniff' ? { Override: false } : undefined),
};

/** The API's headers on S3's answers: Django's security headers as CloudFront's own settings, the others custom; none overriding. */
function responseHeaders(): { [key: string]: YamlValue } {
  const security: { [key: string]: YamlValue } = {};
  const custom: YamlValue[] = [];
  for (const [header, value] of Object.entries(ROUTES.headers)) {
    const setting = header.replace(/^X-/i, '').replaceAll('-', '');
    const own = Object.hasOwn(SECURITY_SETTINGS, setting) ? SECURITY_SETTINGS[setting]!(value) : undefined;
    if (own) security[setting] = own;
    else custom.push({ Header: header, Value: value, Override: false });
  }
  return { CustomHeadersConfig: { Items: custom }, SecurityHeadersConfig: security };
}
