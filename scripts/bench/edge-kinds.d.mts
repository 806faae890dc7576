// The facts scripts/bench/edge-kinds.mjs holds that the tests read (test/edge-bench-kinds.test.ts).
export declare const pageWithin: (count: number, size: number, page: number) => number;
export declare const kinds: (count: number) => [string, (i: number) => string][];
export declare const statusesLine: (statuses: readonly number[]) => string;
