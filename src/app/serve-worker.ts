// One worker of `serve --workers N` (a node:cluster child, started by serve-cluster.ts): answers
// requests from the site its primary builds, hands POSTed cities to the primary (the one writer),
// and stops using or reloads the site's files when the primary says so.
import type { City } from '../core/fields.js';
import { CitiesApiError } from '../core/errors.js';
import { CreateRefused, type CityStore } from '../post/city-store.js';
import type { NewCity } from '../post/create-city.js';
import { endpointPath } from '../core/route-table.js';
import { escapeUriPath } from '../core/url-path.js';
import type { FromPrimary, FromWorker } from './cluster-messages.js';
import { startFront, type Front } from './front.js';
import { LiveSite } from './live-site.js';
import { checkBaseUrl } from './serve.js';

const send = (message: FromWorker) => process.send!(message);
const log = (line: string) => send({ type: 'log', line });

/** POSTed cities go to the primary's writer; each comes back created or refused. */
class PrimaryStore implements CityStore {
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (city: City) => void; reject: (error: unknown) => void }>();

  create(city: NewCity): Promise<City> {
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      send({ type: 'create', id, city });
    });
  }

  answer(message: Extract<FromPrimary, { type: 'created' | 'refused' | 'failed' }>): void {
    const waiting = this.waiting.get(message.id);
    this.waiting.delete(message.id);
    if (message.type === 'created') waiting?.resolve(message.city);
    else if (message.type === 'refused')
      waiting?.reject(new CreateRefused(message.status, message.detail, message.retryAfter));
    else waiting?.reject(new Error(message.message));
  }
}

let front: Front | undefined;
let live: LiveSite | undefined;
let store: PrimaryStore | undefined;
let dir = '';
let release: (() => void) | undefined;
let replaced: Promise<void> | undefined;

async function handle(message: FromPrimary): Promise<FromWorker | undefined> {
  switch (message.type) {
    case 'setup':
      dir = message.setup.dir;
      front = await startFront({
        ...message.setup,
        requestLog: message.setup.requestLog ? (line) => send({ type: 'request', line }) : undefined,
        log,
      });
      store = message.setup.writable ? new PrimaryStore() : undefined;
      return { type: 'listening', id: message.id, url: front.url };
    case 'open': {
      live ??= await LiveSite.open(dir);
      await live.watchBuilds();
      checkBaseUrl({ dir, baseUrl: message.baseUrl }, live.current.manifest.settings);
      front!.open(live, store);
      const { context } = live.current;
      const apiUrl = `${front!.url}${escapeUriPath(endpointPath(context.spec.mount))}`;
      return {
        type: 'opened',
        id: message.id,
        apiUrl,
        summary: `${context.index.count} cities; links on ${context.spec.baseUrl}`,
      };
    }
    case 'replace':
      await new Promise<void>((ready) => {
        replaced = live!.replace(() => new Promise<void>((resolve) => ((release = resolve), ready())));
      });
      return { type: 'done', id: message.id };
    case 'replaced':
      release?.();
      await replaced;
      [release, replaced] = [undefined, undefined];
      return { type: 'done', id: message.id };
    case 'add':
      live!.addCities(message.cities);
      return { type: 'done', id: message.id };
    case 'created':
    case 'refused':
    case 'failed':
      store?.answer(message);
      return undefined;
    case 'close':
      live?.close();
      await front?.close();
      process.disconnect();
      return undefined;
  }
}

process.on('message', (message: FromPrimary) => {
  handle(message).then(
    (reply) => reply && send(reply),
    (error) => {
      if ('id' in message)
        send({
          type: 'failed',
          id: message.id,
          message: (error as Error).message,
          exitCode: error instanceof CitiesApiError && error.exitCode === 2 ? 2 : undefined,
        });
    },
  );
});
send({ type: 'loaded' });
