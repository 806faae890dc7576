import { utf8 } from '../core/bytes.js';
import { detailJson } from '../core/json-text.js';
import { ROUTES } from '../core/route-table.js';

// AWS Lambda and Netlify Functions refuse a response over 6 MB (with a bare 502): a page is capped
// below it, and an answer still larger (cities of unusual size) is replaced by a clear error.

/** Cities one page may hold there: about 2.5 MB at the 500 bytes of a typical city. */
export const SIX_MB_PAGE_CITIES = 5_000;
/** The 6 MB limit less room for the headers. */
export const SIX_MB_BODY_BYTES = 6 * 1024 * 1024 - 16 * 1024;

/** The answer instead of one of `bytes` over `platform`'s limit: 500, saying what to ask instead. */
export function tooLarge(
  bytes: number,
  platform: string,
): { status: number; headers: Record<string, string>; body: Uint8Array } {
  const detail = `This answer (${bytes} bytes) exceeds ${platform}'s 6 MB response limit: ask for a smaller page_size.`;
  return {
    status: 500,
    headers: { [ROUTES.header.contentType]: ROUTES.contentType.json },
    body: utf8(detailJson(detail)),
  };
}
