import { detailJson } from '../core/json-text.js';
import { ROUTES } from '../core/route-table.js';

/**
 * The honest answer (404) of a static host with no live side to a query no file answers: which
 * queries the site's files do answer (its page sizes, when the answer is written into the site).
 */
export function notPrecomputedJson(pageSizes?: readonly number[]): string {
  const { param, orderingFields, descending } = ROUTES;
  const sizes = pageSizes
    ? `${pageSizes.join('|')} (or any size >= the number of cities)`
    : 'a size the site was built with';
  return detailJson(
    `Not precomputed: this static host answers ${param.ordering}=<one of ${orderingFields.length * 2} orderings, e.g. ${orderingFields[1]} or ${descending}${orderingFields[0]}>, ` +
      `${param.pageSize}=${sizes} and ${param.page}; any other query needs the live server (cities-api serve).`,
  );
}
