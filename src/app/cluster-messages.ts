import type { City } from '../core/fields.js';
import type { FrontOptions } from './front.js';

// What `serve --workers` sends between its primary (the one writer) and each worker, over IPC.

/** What a worker needs to listen: the options of its HTTP front, as plain data (functions cannot cross IPC). */
export interface WorkerSetup extends Omit<FrontOptions, 'requestLog' | 'log'> {
  /** Send a line per request to the primary. */
  readonly requestLog: boolean;
  readonly writable: boolean;
}

export type FromPrimary =
  | { readonly type: 'setup'; readonly id: number; readonly setup: WorkerSetup }
  /** Open the built site (checking it was built for `baseUrl`, when given) and answer from it. */
  | { readonly type: 'open'; readonly id: number; readonly baseUrl?: string | undefined }
  /** Stop using the site's files (a build is about to replace them); answer once none is being sent. */
  | { readonly type: 'replace'; readonly id: number }
  /** The build is over (or failed): load the site as it is now, answer once it is answered. */
  | { readonly type: 'replaced'; readonly id: number }
  /** Answer with these created cities too (before they are acknowledged); answer once they are answered. */
  | { readonly type: 'add'; readonly id: number; readonly cities: readonly City[] }
  | { readonly type: 'created'; readonly id: number; readonly city: City }
  | {
      readonly type: 'refused';
      readonly id: number;
      readonly status: 500 | 503;
      readonly detail: string;
      readonly retryAfter?: number | undefined;
    }
  | { readonly type: 'failed'; readonly id: number; readonly message: string }
  | { readonly type: 'close' };

export type FromWorker =
  /** The worker's module listens for messages. */
  | { readonly type: 'loaded' }
  | { readonly type: 'listening'; readonly id: number; readonly url: string }
  | { readonly type: 'opened'; readonly id: number; readonly apiUrl: string; readonly summary: string }
  | { readonly type: 'done'; readonly id: number }
  | { readonly type: 'failed'; readonly id: number; readonly message: string; readonly exitCode?: 1 | 2 | undefined }
  /** A POST's valid city, for the primary's writer. */
  | { readonly type: 'create'; readonly id: number; readonly city: unknown }
  | { readonly type: 'log'; readonly line: string }
  /** A line of the request log. */
  | { readonly type: 'request'; readonly line: string };
