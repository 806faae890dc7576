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

/**
 * Whether the loaded site's dataset (not the cities added since) holds a city id: past its largest
 * id, no (a POST's ids are), at no cost but one pass; else looked up in a set of its ids, made on
 * first need (140,000 ids: 100 ms and megabytes of garbage, which a POST no longer waits for).
 */
export function loadedHas(state: LoadedSite): (id: number) => boolean {
  const { ids } = baseIndex(state).table;
  let largest = Number.NEGATIVE_INFINITY;
  for (const id of ids) if (id > largest) largest = id;
  let set: Set<number> | undefined;
  return (id) => id <= largest && (set ??= new Set(ids)).has(id);
}

function baseIndex(state: LoadedSite): CityIndex {
  const { index } = state.context;
  if (index instanceof OverlayIndex) return index.base;
  if (!(index instanceof CityIndex)) throw new TypeError('only a whole dataset in memory takes new cities');
  return index;
}
