import { ROUTES } from '../core/route-table.js';

/**
 * A file a writable server keeps in its site while the files are behind the data it answers
 * (cities created since the last build): a host that reads the files itself (nginx) sends every
 * request to the live server while it exists. Not the site's own file: no manifest lists it.
 */
export const BEHIND_PATH = `${ROUTES.file.meta}/behind`;

/** What the marker says to whoever opens it. */
export const BEHIND_TEXT = 'the files are behind the data: ask the live server\n';
