import type { City } from '../core/fields.js';
import { CreateRefused } from '../post/city-store.js';
import type { NewCity } from '../post/create-city.js';

/**
 * Created cities: each given the next id past `lastId` and the same timestamp of now as
 * created_at and updated_at (strictly increasing across the batch). Ids past 2^53-1 are not exact
 * in JSON clients (nor read by our reader): the cities left without one are refused, not written.
 */
export function stampNew(cities: readonly NewCity[], lastId: number): City[] {
  let id = lastId;
  const room = Math.min(cities.length, Number.MAX_SAFE_INTEGER - id);
  const stamp = microTimestamps();
  return cities.slice(0, Math.max(0, room)).map((city) => {
    const now = stamp();
    return { id: ++id, ...city, created_at: now, updated_at: now } as City;
  });
}

/** The refusal of a city left without an id by `stampNew`. */
export function idsExhausted(lastId: number): CreateRefused {
  return new CreateRefused(
    500,
    `No id is left for a new city: the largest id in use is ${lastId}, and ids stop at ${Number.MAX_SAFE_INTEGER} (2^53-1, the largest integer JSON clients read exactly). Nothing was written.`,
  );
}

/** A source of `YYYY-MM-DDTHH:MM:SS.ffffffZ` timestamps of now, strictly increasing. */
function microTimestamps(): () => string {
  let last = 0;
  return () => {
    const micros = Math.max(Math.floor((performance.timeOrigin + performance.now()) * 1000), last + 1);
    last = micros;
    const date = new Date(Math.floor(micros / 1000)).toISOString();
    return `${date.slice(0, 19)}.${String(micros % 1_000_000).padStart(6, '0')}Z`;
  };
}
