import { CityIndex as IndexOfCities } from '../core/city-index.js';
import { CityTable as TableOfCities } from '../core/city-table.js';
import type { Bytes } from '../core/bytes.js';
import type { Collation } from '../core/collation.js';
import type { City } from '../core/fields.js';
import { validateRecord, type RecordResult } from '../core/validate-record.js';
import { Collector } from '../dataset/dataset-problems.js';
import * as is from './argument-kinds.js';
import { checkArguments } from './library-entries.js';

// The package's classes as a JavaScript caller may use them (library-entries.ts does the same for
// its functions): what a caller makes them of is checked when they are made, never later, deep
// inside a request. The build and the server make the core classes themselves, unchecked.

/**
 * The dataset held compactly (core/city-table.ts). fromCities() checks each city as a JSON
 * dataset's records are checked (every field, its type and range: the same CitiesApiError, each
 * problem located by the city's index); the tables it and readDataset() make are the core class,
 * which `instanceof CityTable` accepts.
 */
export class CityTable extends TableOfCities {
  /** What a table is made of (parts(), CityTable.of()): arrays of the right kinds, else a CitiesApiError before anything reads them. */
  constructor(count: number, ids: Float64Array, top: Uint8Array, chunks: readonly Bytes[], spans: Uint32Array) {
    checkArguments('new CityTable', TABLE_PARTS, [count, ids, top, chunks, spans]);
    super(count, ids, top, chunks, spans);
  }

  static override fromCities(cities: readonly City[], sized = false): TableOfCities {
    checkArguments('CityTable.fromCities', { cities: (v) => (Array.isArray(v) ? undefined : 'an array of cities') }, [
      cities,
    ]);
    const collector = new Collector();
    const valid: City[] = [];
    cities.forEach((city: unknown, index) => {
      const record = is.plainObject(city) ? null : (city as Readonly<Record<string, unknown>>);
      const result: RecordResult = record
        ? validateRecord(record, false)
        : { problems: [{ field: '(city)', value: city, reason: 'is not an object of city fields' }] };
      collector.record(result, { index, ...(record && 'id' in record && { id: record.id }) });
      if (result.city) valid.push(result.city);
    });
    if (collector.total) throw collector.error('cities');
    return TableOfCities.fromCities(valid, sized);
  }

  static override fromDatasetFile(file: Uint8Array): TableOfCities {
    checkArguments(
      'CityTable.fromDatasetFile',
      { file: (v) => (v instanceof Uint8Array ? undefined : "the bytes of a site's dataset file") },
      [file],
    );
    // A copy: the core class moves the file's lines in place, and these bytes are the caller's.
    return TableOfCities.fromDatasetFile(file.slice());
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return value instanceof TableOfCities;
  }
}

const array =
  (kind: { new (...args: never[]): unknown; name: string }): is.Kind =>
  (v) =>
    v instanceof kind
      ? undefined
      : `a ${kind.name} (the table's parts(); or make a table with CityTable.fromCities(cities))`;
const TABLE_PARTS: Record<string, is.Kind> = {
  count: is.cityCount,
  ids: array(Float64Array),
  top: array(Uint8Array),
  chunks: (v) => (Array.isArray(v) && v.every((c) => c instanceof Uint8Array) ? undefined : 'an array of Uint8Array'),
  spans: array(Uint32Array),
};

const INDEX_ARGUMENTS: Record<string, is.Kind> = {
  table: (v) =>
    v instanceof TableOfCities ? undefined : 'a CityTable (await readDataset(file), or CityTable.fromCities(cities))',
  collation: is.optional(is.SETTINGS_FIELDS.collation!),
};

/** The dataset prepared for answering (core/city-index.ts), its table and collation checked when it is made. */
export class CityIndex extends IndexOfCities {
  constructor(table: TableOfCities, collation?: Collation) {
    checkArguments('new CityIndex', INDEX_ARGUMENTS, [table, collation]);
    super(table, collation);
  }
}
