import { fileURLToPath } from 'node:url';
import type { PathRole } from '../fs/fs-error.js';

/** The sample dataset shipped in the package (48 cities). */
export const SAMPLE_DATASET = fileURLToPath(new URL('../../data/cities.csv', import.meta.url));

/** The dataset, as file system errors name it: a missing one points at --data and the sample. */
export const DATASET_ROLE: PathRole = {
  what: 'dataset',
  option: '--data FILE',
  missingHint: `to try cities-api, a sample of 48 cities ships with it: --data ${SAMPLE_DATASET}`,
};
