import { CitiesApiError } from '../core/errors.js';

// Each platform's documented limits, as one table per recipe (its `limits`), and the one check that
// `cities-api edge` runs against them before it writes anything. A limit with a `measure` bounds a
// figure of the deployment (files, the largest file, the code, the package), which the recipe
// measures from the site; one without bounds a request at run time (memory, CPU, response size),
// which the adapter keeps or the platform's guide explains: listed so that the guide in docs/
// shows every limit from the same table (limitsTable, checked by test/edge-limits.test.ts).

/** Figures of a deployment a recipe measures before writing. */
export type Measure =
  /** Files uploaded in one deploy. */
  | 'files'
  /** The largest of them. */
  | 'fileBytes'
  /** The function's code (bundle, settings, entry), compressed as the platform counts it. */
  | 'codeBytes'
  /** The deployment package, unzipped. */
  | 'packageBytes'
  /** The deployment package, zipped. */
  | 'zipBytes';

export interface PlatformLimit {
  /** What is limited, in our words: "asset files per Worker version (Workers Free)". */
  readonly what: string;
  readonly figure: number;
  readonly unit: 'files' | 'bytes' | 'ms';
  /** The deployment's figure it bounds; absent: a limit at run time, not checked by `edge`. */
  readonly measure?: Measure;
  /** Over it, the recipe does otherwise (says how in `advice`) rather than refusing. */
  readonly adapts?: true;
  /** Where it comes from: the platform's documentation page, by name. */
  readonly source: string;
  /** What to do when over it (or, at run time, what cities-api does about it). */
  readonly advice: string;
}

/** A measured figure, and what it is of (a file's path) when that helps to act. */
export interface Figure {
  readonly value: number;
  readonly of?: string;
}
export type Measured = Partial<Record<Measure, Figure>>;
/** Figures replacing the table's (tests use small ones rather than large sites). */
export type LimitOverrides = Partial<Record<Measure, number>>;

/** The figure of `measure` in `limits` (the override's if any); Infinity when the platform sets none. */
export function limitOf(limits: readonly PlatformLimit[], measure: Measure, overrides: LimitOverrides = {}): number {
  return overrides[measure] ?? limits.find((l) => l.measure === measure)?.figure ?? Infinity;
}

/** Refuses a deployment over any of `limits`: each limit over, its figure, the site's, where it comes from, what to do. */
export function checkLimits(
  { title, limits, doc }: { title: string; limits: readonly PlatformLimit[]; doc: string },
  measured: Measured,
  overrides: LimitOverrides = {},
): void {
  const over = limits.flatMap((limit) => {
    if (!limit.measure || limit.adapts) return [];
    const figure = measured[limit.measure];
    const max = limitOf([limit], limit.measure, overrides);
    if (!figure || figure.value <= max) return [];
    const of = figure.of ? ` (${figure.of})` : '';
    return [
      `${limit.what}: ${amount(figure.value, limit.unit)}${of}, over the ${amount(max, limit.unit)} ${title} takes (${limit.source}): ${limit.advice}`,
    ];
  });
  if (over.length > 0)
    throw new CitiesApiError(
      `the site does not fit the limits of ${title}, so nothing of the project was written (${doc} lists them):\n  ${over.join('\n  ')}`,
      2,
    );
}

/** The limits as a Markdown table, which the platform's guide in docs/ holds (test/edge-limits.test.ts checks it). */
export function limitsTable(limits: readonly PlatformLimit[]): string {
  const rows = limits.map((l) => {
    const checked = !l.measure ? 'no: at run time' : l.adapts ? 'yes: adapts' : 'yes: refuses';
    return `| ${l.what} | ${amount(l.figure, l.unit)} | ${l.source} | ${checked} | ${l.advice} |`;
  });
  return [
    '| limit | figure | from | checked by `edge` | what to do, what cities-api does |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}

/** A figure as the docs say it: files counted, bytes with their MiB. */
export function amount(value: number, unit: PlatformLimit['unit']): string {
  const n = value.toLocaleString('en-US');
  if (unit === 'files') return `${n} file${value === 1 ? '' : 's'}`;
  if (unit === 'ms') return `${n} ms`;
  const [size, name] = value >= 2 ** 30 ? [value / 2 ** 30, 'GiB'] : [value / 2 ** 20, 'MiB'];
  return value >= 2 ** 20 ? `${n} bytes (${Number(size.toFixed(1))} ${name})` : `${n} bytes`;
}
