import { CityIndex } from '../core/city-index.js';
import type { City } from '../core/fields.js';
import { OverlayIndex } from '../core/overlay-index.js';
import { siteSpec } from '../site/spec.js';
import type { LoadedSite } from './site-state.js';

/**
 * The state answering with `cities` too, which its files do not hold: the loaded dataset's index
 * with the cities beside it (OverlayIndex: nothing of the dataset ranked, sorted or copied again),
 * files unused until a site holding them is loaded.
 */
export function withCities(state: LoadedSite, cities: readonly City[]): LoadedSite {
  const { index } = state.context;
  const next = index instanceof OverlayIndex ? index.with(cities) : OverlayIndex.over(baseIndex(state), cities);
  return {
    ...state,
    context: { ...state.context, spec: siteSpec(state.manifest.settings, next.count), index: next, useFiles: false },
  };
}

/** The ids of the cities a loaded site's dataset holds. */
export function idsOf(state: LoadedSite): Set<number> {
  return new Set(baseIndex(state).table.ids);
}

function baseIndex(state: LoadedSite): CityIndex {
  const { index } = state.context;
  if (index instanceof OverlayIndex) return index.base;
  if (!(index instanceof CityIndex)) throw new TypeError('only a whole dataset in memory takes new cities');
  return index;
}
