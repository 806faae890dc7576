// Issue #26's goals for serve's answers, read by bench:server (req/s) and bench:instructions.

/** [row, ceiling, ratio]: the row's req/s at least `ratio` times the ceiling's. */
export const CEILING_GOALS = [
  ['A', 'D', 0.9],
  ['B', "D'", 0.75],
  ['BD', "D'", 0.75],
];

/** [logged, quiet]: serve with its default request log against the same serve with --quiet. */
export const LOG_PAIRS = [
  ['AL', 'A'],
  ['BL', 'B'],
];

/** The logged serve's req/s at least this times the quiet one's: the log costs at most 10 %. */
export const LOG_GOAL = 0.9;
