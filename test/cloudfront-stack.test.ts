import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CitiesApiError } from '../src/core/errors.js';
import { ROUTES } from '../src/core/route-table.js';
import { cloudFrontFunction } from '../src/hosts/cloudfront.js';
import { CACHING_OPTIMIZED, FAILOVER_STATUSES } from '../src/hosts/cloudfront-distribution.js';
import { CLOUDFRONT_FUNCTION_COMMENT, cloudFrontStack } from '../src/hosts/cloudfront-stack.js';
import { yamlText, type YamlValue } from '../src/hosts/yaml-text.js';
import type { SiteSpec } from '../src/site/spec.js';
import { CFN_SPEC, templateProblems } from './cfn-spec.js';
import { testSpec } from './helpers.js';

// `config cloudfront --stack`: the CloudFormation template of the whole S3 + CloudFront
// deployment, read back from its YAML as CloudFormation would, checked against AWS's resource
// specification (test/cfn-spec.ts) and for what docs/cloudfront.md promises of each part.

type Template = any;

const LAMBDA_URL = 'https://abc123xyz.lambda-url.eu-west-1.on.aws';
const MODES: [string, SiteSpec][] = [
  ['static-only', testSpec({ baseUrl: 'https://api.example.org' })],
  ['a Lambda function URL as live origin', testSpec({ baseUrl: 'https://api.example.org', liveUrl: LAMBDA_URL })],
  [
    'a serve on a port and path as live origin',
    testSpec({ baseUrl: 'https://example.org/api/v1', mount: '/api/v1', liveUrl: 'http://live.example.org:8080/app' }),
  ],
  ["the distribution's own domain as base URL", testSpec({ baseUrl: 'https://d111111abcdef8.cloudfront.net' })],
];

const read = (spec: SiteSpec): Template => parse(cloudFrontStack(spec));
const [staticT, lambdaT, serveT, ownDomainT] = MODES.map(([, spec]) => read(spec)) as Template[];
const config = (t: Template) => t.Resources.Distribution.Properties.DistributionConfig;
const behavior = (t: Template) => config(t).DefaultCacheBehavior;

/** What CloudFormation makes of an Fn::Sub whose variables are parameters: each replaced, `${!` kept as `${`. */
function substitute(text: string, values: Record<string, string>): string {
  return text.replace(/\$\{(!?)([^}]*)\}/g, (whole, bang, name) => (bang ? `\${${name}}` : (values[name] ?? whole)));
}

describe.each(MODES)('the stack for %s', (_, spec) => {
  const text = cloudFrontStack(spec);

  it('passes the resource specification: types, properties, required ones, value types, references', () => {
    expect(templateProblems(parse(text))).toEqual([]);
  });

  it('reads back as the same template with a YAML 1.1 parser (CloudFormation) and a 1.2 one', () => {
    expect(parse(text, { version: '1.1' })).toEqual(parse(text, { version: '1.2' }));
    expect(yamlText(parse(text))).toBe(text);
  });

  it("holds the function's code that config cloudfront prints (with the parameter's default host)", () => {
    const code = read(spec).Resources.RouterFunction.Properties.FunctionCode;
    const live = read(spec).Parameters.LiveOriginDomain;
    const resolved = live ? substitute(code['Fn::Sub'], { LiveOriginDomain: live.Default }) : code;
    expect(resolved).toBe(cloudFrontFunction(spec));
  });

  it('every Quantity is the length of its Items', () => {
    const mismatched: string[] = [];
    const walk = (value: unknown, where: string): void => {
      if (typeof value !== 'object' || value === null) return;
      const record = value as Record<string, unknown>;
      if ('Quantity' in record && record.Quantity !== (record.Items as unknown[] | undefined)?.length)
        mismatched.push(where);
      for (const [key, item] of Object.entries(record)) walk(item, `${where}.${key}`);
    };
    walk(read(spec), 'template');
    expect(mismatched).toEqual([]);
  });
});

const s3Origin = (t: Template) => config(t).Origins.find((o: Template) => o.Id === 's3');
const liveOrigin = (t: Template) => config(t).Origins.find((o: Template) => o.Id === 'live');

describe('what the stack holds', () => {
  it.each([
    [
      'the bucket blocks every kind of public access',
      (t: Template) => Object.values(t.Resources.Bucket.Properties.PublicAccessBlockConfiguration),
      [true, true, true, true],
    ],
    ['the bucket is kept when the stack is deleted', (t: Template) => t.Resources.Bucket.DeletionPolicy, 'Retain'],
    [
      'the S3 origin is the bucket REST endpoint, read through the origin access control',
      (t: Template) => [s3Origin(t).DomainName, s3Origin(t).OriginAccessControlId],
      [{ 'Fn::GetAtt': ['Bucket', 'RegionalDomainName'] }, { 'Fn::GetAtt': ['OriginAccessControl', 'Id'] }],
    ],
    [
      'the origin access control signs always, SigV4, for S3',
      (t: Template) => {
        const { OriginAccessControlOriginType, SigningBehavior, SigningProtocol } =
          t.Resources.OriginAccessControl.Properties.OriginAccessControlConfig;
        return [OriginAccessControlOriginType, SigningBehavior, SigningProtocol];
      },
      ['s3', 'always', 'sigv4'],
    ],
    [
      'the bucket policy lets CloudFront get objects only for this distribution (its SourceArn names it)',
      (t: Template) => {
        const [statement, ...others] = t.Resources.BucketPolicy.Properties.PolicyDocument.Statement;
        return {
          others: others.length,
          bucket: t.Resources.BucketPolicy.Properties.Bucket,
          principal: statement.Principal,
          action: statement.Action,
          resource: statement.Resource,
          source: statement.Condition.StringEquals['AWS:SourceArn']['Fn::Sub'],
        };
      },
      {
        others: 0,
        bucket: { Ref: 'Bucket' },
        principal: { Service: 'cloudfront.amazonaws.com' },
        action: 's3:GetObject',
        resource: { 'Fn::Sub': '${Bucket.Arn}/*' },
        source: 'arn:${AWS::Partition}:cloudfront::${AWS::AccountId}:distribution/${Distribution}',
      },
    ],
    [
      'the function runs on viewer-request, cloudfront-js-2.0, published',
      (t: Template) => {
        const { FunctionConfig, AutoPublish } = t.Resources.RouterFunction.Properties;
        return [behavior(t).FunctionAssociations, FunctionConfig, AutoPublish];
      },
      [
        [{ EventType: 'viewer-request', FunctionARN: { 'Fn::GetAtt': ['RouterFunction', 'FunctionARN'] } }],
        { Comment: CLOUDFRONT_FUNCTION_COMMENT, Runtime: 'cloudfront-js-2.0' },
        true,
      ],
    ],
    [
      'viewers are sent to HTTPS and get compressed JSON',
      (t: Template) => [behavior(t).ViewerProtocolPolicy, behavior(t).Compress],
      ['redirect-to-https', true],
    ],
    [
      "S3's answers carry the API's headers, none overriding the live server's",
      (t: Template) => {
        const policy = t.Resources.ResponseHeadersPolicy.Properties.ResponseHeadersPolicyConfig;
        const security = policy.SecurityHeadersConfig;
        const headers: Record<string, string> = Object.fromEntries(
          policy.CustomHeadersConfig.Items.map((h: Template) => [h.Header, h.Value]),
        );
        headers['X-Frame-Options'] = security.FrameOptions.FrameOption;
        headers['Referrer-Policy'] = security.ReferrerPolicy.ReferrerPolicy;
        if (security.ContentTypeOptions) headers['X-Content-Type-Options'] = 'nosniff';
        const overriding = [...policy.CustomHeadersConfig.Items, ...Object.values(security)].filter(
          (h: Template) => h.Override !== false,
        );
        return [headers, overriding, behavior(t).ResponseHeadersPolicyId];
      },
      [ROUTES.headers, [], { Ref: 'ResponseHeadersPolicy' }],
    ],
    [
      'the outputs: bucket name, distribution id, domain name',
      (t: Template) => Object.fromEntries(Object.entries(t.Outputs).map(([k, v]) => [k, (v as Template).Value])),
      {
        BucketName: { Ref: 'Bucket' },
        DistributionId: { Ref: 'Distribution' },
        DomainName: { 'Fn::GetAtt': ['Distribution', 'DomainName'] },
      },
    ],
  ] as [string, (t: Template) => unknown, unknown][])('%s (static-only and live alike)', (_, get, expected) => {
    for (const t of [staticT, lambdaT, serveT, ownDomainT]) expect(get(t)).toEqual(expected);
  });

  it.each([
    [
      "static-only: S3's 403 becomes the Not precomputed 404, cached 10 s; no origin group",
      staticT,
      (t: Template) => [config(t).CustomErrorResponses, config(t).OriginGroups, behavior(t).TargetOriginId],
      [
        [
          {
            ErrorCode: 403,
            ResponseCode: 404,
            ResponsePagePath: `/${ROUTES.extras.notPrecomputed}`,
            ErrorCachingMinTTL: 10,
          },
        ],
        undefined,
        's3',
      ],
    ],
    [
      'static-only: the managed CachingOptimized policy, GET and HEAD',
      staticT,
      (t: Template) => [behavior(t).CachePolicyId, behavior(t).AllowedMethods, t.Resources.CachePolicy],
      [CACHING_OPTIMIZED, ['GET', 'HEAD'], undefined],
    ],
    [
      'live: the behavior targets an origin group, S3 first, failing over to the live origin on 403 and 404',
      lambdaT,
      (t: Template) => [behavior(t).TargetOriginId, config(t).OriginGroups.Items, config(t).CustomErrorResponses],
      [
        's3-then-live',
        [
          {
            Id: 's3-then-live',
            FailoverCriteria: { StatusCodes: { Quantity: 2, Items: FAILOVER_STATUSES } },
            Members: { Quantity: 2, Items: [{ OriginId: 's3' }, { OriginId: 'live' }] },
          },
        ],
        undefined,
      ],
    ],
    [
      'live: its own cache policy keys on every query string, Accept, gzip and brotli',
      lambdaT,
      (t: Template) => [
        behavior(t).CachePolicyId,
        t.Resources.CachePolicy.Properties.CachePolicyConfig.ParametersInCacheKeyAndForwardedToOrigin,
      ],
      [
        { Ref: 'CachePolicy' },
        {
          EnableAcceptEncodingGzip: true,
          EnableAcceptEncodingBrotli: true,
          QueryStringsConfig: { QueryStringBehavior: 'all' },
          HeadersConfig: { HeaderBehavior: 'whitelist', Headers: ['Accept'] },
          CookiesConfig: { CookieBehavior: 'none' },
        },
      ],
    ],
    [
      'live: a Lambda function URL is an HTTPS origin whose host is the parameter, its default the URL host',
      lambdaT,
      (t: Template) => [liveOrigin(t), t.Parameters.LiveOriginDomain.Default],
      [
        {
          Id: 'live',
          DomainName: { Ref: 'LiveOriginDomain' },
          CustomOriginConfig: { OriginProtocolPolicy: 'https-only', HTTPSPort: 443, OriginSSLProtocols: ['TLSv1.2'] },
        },
        new URL(LAMBDA_URL).hostname,
      ],
    ],
    [
      "live: a serve's port and path go to the origin as the function's updateRequestOrigin gives them",
      serveT,
      (t: Template) => [liveOrigin(t), t.Parameters.LiveOriginDomain.Default],
      [
        {
          Id: 'live',
          DomainName: { Ref: 'LiveOriginDomain' },
          OriginPath: '/app',
          CustomOriginConfig: { OriginProtocolPolicy: 'http-only', HTTPPort: 8080, OriginSSLProtocols: ['TLSv1.2'] },
        },
        'live.example.org',
      ],
    ],
    [
      'live: the methods an origin group takes (GET, HEAD, OPTIONS), GET and HEAD cached',
      lambdaT,
      (t: Template) => [behavior(t).AllowedMethods, behavior(t).CachedMethods],
      [
        ['GET', 'HEAD', 'OPTIONS'],
        ['GET', 'HEAD'],
      ],
    ],
  ] as [string, Template, (t: Template) => unknown, unknown][])('%s', (_, template, get, expected) => {
    expect(get(template)).toEqual(expected);
  });

  it.each([
    [
      "the base URL's host, with a certificate given",
      staticT,
      {
        aliases: { 'Fn::If': ['HasCertificate', ['api.example.org'], { Ref: 'AWS::NoValue' }] },
        certificate: {
          'Fn::If': [
            'HasCertificate',
            {
              AcmCertificateArn: { Ref: 'CertificateArn' },
              SslSupportMethod: 'sni-only',
              MinimumProtocolVersion: 'TLSv1.2_2021',
            },
            { Ref: 'AWS::NoValue' },
          ],
        },
        parameter: '',
        condition: { 'Fn::Not': [{ 'Fn::Equals': [{ Ref: 'CertificateArn' }, ''] }] },
      },
    ],
    [
      "none when the base URL is the distribution's own domain",
      ownDomainT,
      { aliases: undefined, certificate: undefined, parameter: undefined, condition: undefined },
    ],
  ] as [string, Template, unknown][])('alternate domain name: %s', (_, t, expected) => {
    expect({
      aliases: config(t).Aliases,
      certificate: config(t).ViewerCertificate,
      parameter: t.Parameters.CertificateArn?.Default,
      condition: t.Conditions?.HasCertificate,
    }).toEqual(expected);
  });

  it('live: a host given at deploy time reaches the function too (one parameter, both places)', () => {
    const code = substitute(lambdaT.Resources.RouterFunction.Properties.FunctionCode['Fn::Sub'], {
      LiveOriginDomain: 'other.example.net',
    });
    const live = JSON.parse(/^var LIVE = (.*);$/m.exec(code)![1]!);
    expect(live.domainName).toBe('other.example.net');
    expect(code.match(/\$\{/g)).toBeNull();
  });
});

describe('the validator is live: a broken template fails it', () => {
  const clone = (): Template => structuredClone(lambdaT);
  it.each([
    [
      'a misspelt property',
      (t: Template) => {
        t.Resources.Bucket.Properties.PublicAccessBlockConfig =
          t.Resources.Bucket.Properties.PublicAccessBlockConfiguration;
        delete t.Resources.Bucket.Properties.PublicAccessBlockConfiguration;
      },
      /Bucket\.Properties\.PublicAccessBlockConfig: not a property/,
    ],
    [
      'a misspelt nested property',
      (t: Template) => {
        behavior(t).ViewerProtocol = behavior(t).ViewerProtocolPolicy;
        delete behavior(t).ViewerProtocolPolicy;
      },
      /DefaultCacheBehavior: required property ViewerProtocolPolicy is missing/,
    ],
    [
      'a dangling Ref',
      (t: Template) => {
        behavior(t).CachePolicyId = { Ref: 'CachingPolicy' };
      },
      /Ref to CachingPolicy, which is not/,
    ],
    [
      'a GetAtt of an attribute the type lacks',
      (t: Template) => {
        behavior(t).FunctionAssociations[0].FunctionARN = { 'Fn::GetAtt': ['RouterFunction', 'Arn'] };
      },
      /AWS::CloudFront::Function has no attribute Arn/,
    ],
    [
      'an Fn::Sub naming no resource',
      (t: Template) => {
        t.Resources.BucketPolicy.Properties.PolicyDocument.Statement[0].Resource = { 'Fn::Sub': '${Bukket.Arn}/*' };
      },
      /Fn::GetAtt of Bukket, which is not a resource/,
    ],
    [
      'a missing required property',
      (t: Template) => {
        delete config(t).Enabled;
      },
      /required property Enabled is missing/,
    ],
    [
      'a string where a boolean goes',
      (t: Template) => {
        behavior(t).Compress = 'yes';
      },
      /Compress: expected Boolean, got "yes"/,
    ],
    [
      'a string where an integer list goes',
      (t: Template) => {
        config(t).OriginGroups.Items[0].FailoverCriteria.StatusCodes.Items = ['403'];
      },
      /Items\[0\]: expected Integer/,
    ],
    [
      'an unknown resource type',
      (t: Template) => {
        t.Resources.Bucket.Type = 'AWS::S3::Bukket';
      },
      /unknown resource type AWS::S3::Bukket/,
    ],
    [
      'a parameter default outside its pattern',
      (t: Template) => {
        t.Parameters.LiveOriginDomain.Default = 'a"b';
      },
      /does not match AllowedPattern/,
    ],
    [
      'a DependsOn naming nothing',
      (t: Template) => {
        t.Resources.Distribution.DependsOn = 'Buckett';
      },
      /DependsOn Buckett/,
    ],
  ] as [string, (t: Template) => void, RegExp][])('%s', (_, mutate, problem) => {
    const t = clone();
    mutate(t);
    const problems = templateProblems(t);
    expect(
      problems.some((p) => problem.test(p)),
      problems.join('\n'),
    ).toBe(true);
  });

  it('the specification knows every resource type the stack uses', () => {
    const types = [...new Set(Object.values(lambdaT.Resources).map((r) => (r as Template).Type as string))].sort();
    expect(types.filter((type) => !CFN_SPEC.ResourceTypes[type])).toEqual([]);
    expect(types).toEqual([
      'AWS::CloudFront::CachePolicy',
      'AWS::CloudFront::Distribution',
      'AWS::CloudFront::Function',
      'AWS::CloudFront::OriginAccessControl',
      'AWS::CloudFront::ResponseHeadersPolicy',
      'AWS::S3::Bucket',
      'AWS::S3::BucketPolicy',
    ]);
  });
});

describe('refusals', () => {
  it.each([
    ['an IPv4 address', 'http://127.0.0.1:8080'],
    ['an IPv6 address', 'http://[::1]:8080'],
  ])('a live URL on %s: CloudFront origins need a DNS name (exit 2)', (_, liveUrl) => {
    const stack = () => cloudFrontStack(testSpec({ liveUrl }));
    expect(stack).toThrow(CitiesApiError);
    expect(stack).toThrow(`the live URL ${liveUrl} has no DNS name`);
    try {
      stack();
    } catch (error) {
      expect((error as CitiesApiError).exitCode).toBe(2);
    }
  });
});

describe('yamlText: block YAML that YAML 1.1 and 1.2 read back as the data', () => {
  it.each([
    ['words YAML 1.1 reads as booleans or null, as keys and values', { On: 'yes', no: 'off', Null: 'null', y: '~' }],
    [
      'strings that look like numbers, dates or flow syntax',
      { a: '010', b: '0x1F', c: '2026-11-26', d: '[x]', e: '{y}', f: '- z' },
    ],
    ['empty strings, collections, and keys with syntax in them', { '': '', 'a: b': [], '#c': {}, '- d': [[]] }],
    ['non-ASCII, controls, line and paragraph separators', { t: 'Zürich\u2028\u2029\u0085\u0000\t\u007f\ufeff' }],
    ['code as a literal block, with and without its last newline', { a: 'var x = 1;\n  return x;\n', b: 'one\ntwo' }],
    [
      'text a literal block would change: leading space, blank-line ends, lines of spaces',
      { a: ' x\ny', b: 'x\n\n', c: 'x\n  \ny' },
    ],
    [
      'sequences of mappings and of sequences, numbers and booleans',
      [{ a: 1, b: [2.5, -3] }, [[true, false]], { c: { d: null } }],
    ],
  ] as [string, YamlValue][])('%s', (_, value) => {
    const text = yamlText(value);
    expect(parse(text, { version: '1.1' })).toEqual(value);
    expect(parse(text, { version: '1.2' })).toEqual(value);
  });
});
