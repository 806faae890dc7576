import type { ReadSiteFile } from '../../site/edge-source.js';
import { ROUTES } from '../../core/route-table.js';
import { createFetchHandler } from '../../http/fetch-handler.js';
import { edgeSite, type EdgeProjectData } from '../../http/edge-site.js';
import { SIX_MB_BODY_BYTES, SIX_MB_PAGE_CITIES, tooLarge } from '../response-limit.js';

// AWS Lambda behind a function URL (or API Gateway HTTP API): payload format 2.0 in, the
// `{statusCode, headers, body, isBase64Encoded}` result out. Bodies go base64-encoded, so every
// answer's bytes arrive as computed. `read` takes the site's edge files from the function's own
// code (index.mjs, written by `cities-api edge lambda`, reads the copy zipped beside it).

/** The fields of a payload-2.0 event the handler reads. */
export interface LambdaEvent {
  readonly rawPath: string;
  readonly rawQueryString?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly cookies?: readonly string[];
  readonly body?: string;
  readonly isBase64Encoded?: boolean;
  readonly requestContext: { readonly http: { readonly method: string }; readonly domainName?: string };
}

export interface LambdaResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: boolean;
}

/** AWS Lambda's limit on a synchronous response (6 MB), less room for the headers; the body goes base64 (4 characters per 3 bytes). */
export const LAMBDA_BODY_BYTES = Math.floor((SIX_MB_BODY_BYTES * 3) / 4);

export function lambdaHandler(
  data: EdgeProjectData,
  read: ReadSiteFile,
): (event: LambdaEvent) => Promise<LambdaResult> {
  // Behind CloudFront it is also the origin group's failover for S3 (as serve --failover-origin): file paths are answered.
  const site = edgeSite(data.settings, read, { maxPageCities: SIX_MB_PAGE_CITIES, stream: false });
  const openapi = () => read(ROUTES.extras.openapi);
  const handler = createFetchHandler({ site, filePaths: true, openapi });
  return async (event) => {
    const method = event.requestContext.http.method;
    const query = event.rawQueryString ? `?${event.rawQueryString}` : '';
    // The function URL's own name, never the client's Host header (which could make the URL invalid: `a@b`); answers use only the path and query.
    const host = validHost(event.requestContext.domainName) ?? 'lambda.invalid';
    const body =
      event.body === undefined || method === 'GET' || method === 'HEAD'
        ? undefined
        : base64OrText(event.body, event.isBase64Encoded);
    const response = await handler(
      new Request(`https://${host}${event.rawPath}${query}`, { method, headers: event.headers ?? {}, body }),
    );
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (bytes.length > LAMBDA_BODY_BYTES) {
      const refused = tooLarge(bytes.length, 'AWS Lambda');
      return {
        statusCode: refused.status,
        headers: refused.headers,
        body: toBase64(refused.body),
        isBase64Encoded: true,
      };
    }
    return {
      statusCode: response.status,
      headers: Object.fromEntries(response.headers),
      body: toBase64(bytes),
      isBase64Encoded: true,
    };
  };
}

function validHost(name: string | undefined): string | undefined {
  return name && /^[A-Za-z0-9.-]+$/.test(name) ? name : undefined;
}

function base64OrText(body: string, base64 = false): Uint8Array | string {
  return base64 ? Uint8Array.from(atob(body), (c) => c.charCodeAt(0)) : body;
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
