import { CityIndex } from '../core/city-index.js';
import type { City } from '../core/fields.js';
import { siteSpec } from '../site/spec.js';
import type { LoadedSite } from './site-state.js';

/**
 * The state answering with `cities` too, which its files do not hold: its table and index
 * extended (CityIndex.appended, no ranking again), files unused until a site holding them is loaded.
 */
export function withCities(state: LoadedSite, cities: readonly City[]): LoadedSite {
  const index = wholeIndex(state);
  const table = index.table.appended(cities);
  return {
    ...state,
    context: {
      ...state.context,
      spec: siteSpec(state.manifest.settings, table.count),
      index: index.appended(table),
      useFiles: false,
    },
  };
}

/** The ids of the cities a state answers. */
export function idsOf(state: LoadedSite): Set<number> {
  return new Set(wholeIndex(state).table.ids);
}

function wholeIndex(state: LoadedSite): CityIndex {
  const { index } = state.context;
  if (!(index instanceof CityIndex)) throw new TypeError('only a whole dataset in memory takes new cities');
  return index;
}
