import { fileURLToPath } from 'node:url';
import { optionNamed } from '../core/errors.js';
import type { PathRole } from '../fs/fs-error.js';

/** The sample dataset shipped in the package (48 cities). */
export const SAMPLE_DATASET = fileURLToPath(new URL('../../data/cities.csv', import.meta.url));

/** The dataset, as file system errors name it: a missing one points at its option and the sample. */
export const DATASET_ROLE: PathRole = {
  what: 'dataset',
  option: optionNamed('data'),
  missingHint: `to try cities-api, a sample of 48 cities ships with it: ${optionNamed('data')} ${SAMPLE_DATASET}`,
};
