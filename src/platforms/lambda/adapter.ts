import type { ReadSiteFile } from '../../site/edge-source.js';
import { toBase64 } from '../../core/bytes.js';
import { ROUTES } from '../../core/route-table.js';
import { createFetchHandler } from '../../http/fetch-handler.js';
import type { EdgeProjectData } from '../../http/edge-site.js';
import { SIX_MB_BODY_BYTES, SIX_MB_PAGE_CITIES, tooLarge } from '../response-limit.js';
import { requestOf, targetOf, type LambdaEvent } from './event.js';
import { packageSite, type OpenFile } from './package-reads.js';

export type { LambdaEvent } from './event.js';
export type { OpenFile } from './package-reads.js';
export { lambdaStreamingHandler, LAMBDA_STREAM_BYTES, LAMBDA_STREAM_PAGE_CITIES } from './streaming.js';

// AWS Lambda behind API Gateway (HTTP API) or a function URL in its default mode (BUFFERED):
// payload format 2.0 in, the `{statusCode, headers, body, isBase64Encoded}` result out, a page
// capped below the 6 MB response limit (a function URL in RESPONSE_STREAM mode: streaming.ts). Bodies go base64-encoded, so every
// answer's bytes arrive as computed. `read` and `open` take the site's files from the function's
// own package (index.mjs, written by `cities-api edge lambda`, reads the copy zipped beside it):
// one layout of the cities, read by position (package-reads.ts).

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
  open?: OpenFile,
): (event: LambdaEvent) => Promise<LambdaResult> {
  // Behind CloudFront it is also the origin group's failover for S3 (as serve --failover-origin): file paths are answered.
  const site = packageSite(data, read, open, { maxPageCities: SIX_MB_PAGE_CITIES, stream: false });
  const openapi = () => read(ROUTES.extras.openapi);
  const handler = createFetchHandler({ site, filePaths: true, openapi });
  return async (event) => {
    const response = await handler(requestOf(event), undefined, targetOf(event));
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
