import { CitiesApiError } from '../core/errors.js';
import { CITY_FIELDS, type City } from '../core/fields.js';
import { cityJson } from '../core/json-text.js';
import type { FileIds } from './file-ids.js';

// Whether a logged city whose id the dataset file holds is folded in: only if the file's record is
// that city. A row of someone else's given its id (the file edited by hand after a server was
// killed) is not it: taken for it, the fold dropped the logged city from the log, lost.

/** The logged cities whose id `inFile` holds with another record (its records of their ids read: fileIds' `wanted`). */
export function takenIds(logged: readonly City[], inFile: FileIds): { logged: City; file: City }[] {
  const taken: { logged: City; file: City }[] = [];
  for (const city of logged) {
    const record = inFile.records.get(city.id);
    // As both are read (the log's JSON, the reader's table) and written again: 1.50 and 1.5 are one longitude.
    if (record && cityJson(record) !== cityJson(city)) taken.push({ logged: city, file: record });
  }
  return taken;
}

/** Refuses (nothing written, the log kept) when a logged city's id is another record's in the file (takenIds). */
export function checkLoggedInFile(file: string, log: string, logged: readonly City[], inFile: FileIds): void {
  const taken = takenIds(logged, inFile);
  if (taken.length) throw new LoggedIdTaken(file, log, taken);
}

const MAX_SHOWN = 5;

/** A logged city's id held by another record in the dataset file: folding it in would lose it. */
export class LoggedIdTaken extends CitiesApiError {
  constructor(file: string, log: string, taken: readonly { logged: City; file: City }[]) {
    const ids = taken.map(({ logged }) => logged.id);
    const each = taken.slice(0, MAX_SHOWN).map(({ logged, file: record }) => {
      const fields = CITY_FIELDS.filter((field) => String(logged[field]) !== String(record[field]));
      const shown = fields
        .slice(0, 3)
        .map(
          (field) => `${field} ${JSON.stringify(record[field])} in the file, ${JSON.stringify(logged[field])} logged`,
        );
      return `id ${logged.id}: ${shown.join('; ')}${fields.length > 3 ? ` (and ${fields.length - 3} fields more)` : ''}`;
    });
    const more = taken.length > MAX_SHOWN ? `; and ${taken.length - MAX_SHOWN} more` : '';
    const some =
      ids.length === 1 ? `id ${ids[0]} is that of a city` : `ids ${ids.join(', ')} are those of ${ids.length} cities`;
    const rows = ids.length === 1 ? 'its row with that id is' : 'its rows with those ids are';
    super(
      `${file}: ${some} a writable server created (acknowledged) and logged in ${log}, not folded in yet, but ${rows} another record (${each.join('; ')}${more}): folded in as it is, the created city would be lost. Give the row of your own another id, or remove it, then run again (the log is kept until then)`,
    );
  }
}
