import { CitiesApiError } from '../core/errors.js';
import type { City } from '../core/fields.js';
import type { NewCity } from './create-city.js';

/** Where a POST's valid city goes: it comes back with its id once it is stored and answered. */
export interface CityStore {
  create(city: NewCity): Promise<City>;
}

/** A store whose created cities reach the site's files later, in the background (serve --writable's). */
export interface CatchingUpStore extends CityStore {
  /** The created cities the site's files lack now: a server that opens the site answers them too. */
  unbuilt(): readonly City[];
}

/** A creation refused with an answer of its own (anything else is a plain server error). */
export class CreateRefused extends CitiesApiError {
  constructor(
    readonly status: 500 | 503,
    readonly detail: string,
    readonly retryAfter?: number,
  ) {
    super(detail);
  }
}
