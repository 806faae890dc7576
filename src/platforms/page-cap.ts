import { CitiesApiError } from '../core/errors.js';
import { EDGE_PAGE_CITIES, type EdgeSourceOptions } from '../site/edge-source.js';

// A cap an entry (worker.js, main.js) may put on the cities of every computed page, for a plan
// whose CPU limit a large page exceeds: a larger page then answers a 500 saying so, before any city
// is read, instead of being stopped partway by the platform. Unset, every page is answered.

/** What an entry may pass to its adapter besides the site. */
export interface PageCapOptions {
  /** The most cities a computed page may hold (streamed, or assembled whole). */
  readonly maxPageCities?: number;
}

/**
 * The edge source's options for `maxPageCities`, checked when the entry loads. `where`: what
 * computes (`this Worker`); `entry`: its file; `limit`: the CPU limit the cap is for.
 */
export function pageCapOptions(
  { maxPageCities: cities }: PageCapOptions,
  where: string,
  entry: string,
  limit: string,
): Pick<EdgeSourceOptions, 'maxPageCities' | 'streamLimit'> {
  if (cities === undefined) return {};
  if (!Number.isSafeInteger(cities) || cities < 1)
    throw new CitiesApiError(`maxPageCities must be a whole number of cities, at least 1 (${entry} gives ${cities})`);
  const why = `cities ${where} computes on a page (maxPageCities in ${entry}: ${limit})`;
  return { maxPageCities: Math.min(cities, EDGE_PAGE_CITIES), streamLimit: { cities, why } };
}
