// The facts scripts/build-lib.mjs holds that the tests read (test/build-on-demand.ts).
export declare const INPUTS: readonly string[];
export declare const STAMP: string;
