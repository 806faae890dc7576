import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CitiesApiError } from '../core/errors.js';

export interface Listening {
  /** `http://host:port`, where the server listens (IPv6 hosts in brackets). */
  readonly url: string;
  /** Stops accepting, closes every connection, resolves once the server is closed. */
  close(): Promise<void>;
}

/** Listens on `port` (0: any free one) and `host`; a port in use is a clear error. */
export async function listen(server: Server, port: number, host: string): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new CitiesApiError(`port ${port} on ${host} is already in use; choose another with --port`)
          : error,
      ),
    );
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
