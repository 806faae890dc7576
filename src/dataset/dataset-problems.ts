import { CityTableBuilder } from '../core/table-parts.js';
import { CitiesApiError, formatProblem, optionNamed, showValue, type Problem } from '../core/errors.js';
import type { City } from '../core/fields.js';
import type { RecordResult } from '../core/validate-record.js';

export const MAX_LISTED_PROBLEMS = 50;
/** Problems kept for the error object; beyond this they are only counted. */
const MAX_KEPT_PROBLEMS = 10_000;

export type Where = Omit<Problem, 'reason'>;

/**
 * Gathers validated cities (while all is well) and problems (capped), checking ids are unique:
 * an id is checked whenever it is valid itself, whatever else is wrong with its record, so a
 * duplicate is reported in the same run as its record's other problems.
 */
export class Collector {
  readonly table = new CityTableBuilder();
  readonly problems: Problem[] = [];
  total = 0;
  /** id -> where it was first seen: a CSV line, or a JSON record index as its bitwise complement. */
  private readonly firstSeen = new Map<number, number>();
  /** Columns (CSV) or keys (JSON) that are not city fields, ignored, and the line each was first seen on. */
  readonly ignored = new Map<string, number>();

  problem(p: Problem): void {
    this.total++;
    if (this.problems.length < MAX_KEPT_PROBLEMS) this.problems.push(p);
  }

  record(result: RecordResult, where: Where): void {
    for (const p of result.problems ?? []) this.problem({ ...where, ...p });
    if (result.id !== undefined) this.id(result.id, where);
    if (result.city && !this.total) this.table.add(result.city as City);
  }

  /** Checks an id is not one seen before (also for records too broken to validate, when their id is readable). */
  id(id: number, where: Where): void {
    const first = this.firstSeen.get(id);
    const place = (at: number) => (at < 0 ? `record ${~at}` : `line ${at}`);
    if (first !== undefined)
      this.problem({ ...where, field: 'id', value: id, reason: `duplicates the id of ${place(first)}` });
    else this.firstSeen.set(id, where.index !== undefined ? ~where.index : where.line!);
  }

  ignore(names: readonly string[], line: number): void {
    for (const name of names) if (!this.ignored.has(name)) this.ignored.set(name, line);
  }

  /** The one warning naming every ignored column or key, located at the first line one was seen on. */
  warning(file: string, kind: 'column' | 'key'): Problem | undefined {
    if (!this.ignored.size) return undefined;
    const names = [...this.ignored.keys()];
    const plural = names.length > 1 ? 's' : '';
    return {
      file,
      line: Math.min(...this.ignored.values()),
      reason: `ignored unknown ${kind}${plural} ${names
        .slice(0, 10)
        .map((n) => showValue(n))
        .join(
          ', ',
        )}${names.length > 10 ? ` and ${names.length - 10} more` : ''} (${plural ? 'not city fields' : 'not a city field'}; ${optionNamed('strict')} refuses ${plural ? 'them' : 'it'})`,
    };
  }

  error(file: string): CitiesApiError {
    const located = this.problems.map((p) => ({ ...p, file }));
    const shown = located.slice(0, MAX_LISTED_PROBLEMS).map((p) => `  ${formatProblem(p)}`);
    const more = this.total > MAX_LISTED_PROBLEMS ? [`  ... and ${this.total - MAX_LISTED_PROBLEMS} more`] : [];
    const noun = this.total === 1 ? 'problem' : 'problems';
    return new CitiesApiError(
      [`invalid dataset ${file} (${this.total} ${noun}; nothing was written):`, ...shown, ...more].join('\n'),
      1,
      located,
    );
  }
}
