import { connect } from 'node:net';
import { parentChannel } from '../proc/workers.js';
import { Answers, type WarmUpProtocol } from './warm-up-wire.js';

// The warm-up's client (warm-up.ts), in a thread of its own: its sockets and streams are this
// isolate's, so the server's isolate compiles node's socket and stream code for the server's alone
// (with the client in the same isolate, its sockets' shapes met the server's in that code, and
// the first clients' connections still deoptimized it).

/** Requests a connection sends before it ends (and another begins). */
const PER_CONNECTION = 50;

const parent = parentChannel<WarmUpProtocol>();
parent.handle('ask', async ({ port, requests, connections }) => {
  const host = `Host: 127.0.0.1:${port}\r\n`;
  const etags = new Map<string, string>();
  let next = 0;
  // Each connection ends after PER_CONNECTION requests, in turn by the client (FIN), by the server (`Connection: close`)
  // or closed by the client with its last request unanswered (as wrk's at its end): the first clients' own connections then
  // end on a path compiled here.
  const client = async (lane: number) => {
    for (let round = lane; next < requests.length; round++) {
      const socket = connect(port, '127.0.0.1');
      const answers = new Answers(socket);
      const closed = new Promise((resolve) => socket.once('close', resolve));
      try {
        for (let n = 1; n <= PER_CONNECTION && next < requests.length; n++) {
          const { method, target, headers, conditional } = requests[next++]!;
          const etag = conditional ? etags.get(target) : undefined;
          const ifNoneMatch = etag === undefined ? '' : `If-None-Match: ${etag}\r\n`;
          const end = n === PER_CONNECTION ? round % 3 : 0;
          const close = end === 1 ? 'Connection: close\r\n' : '';
          socket.write(`${method} ${target} HTTP/1.1\r\n${host}${headers}${ifNoneMatch}${close}\r\n`);
          if (end === 2) break;
          const tag = /\r\netag: *([^\r]*)/i.exec(await answers.next(method === 'HEAD'))?.[1];
          if (tag !== undefined) etags.set(target, tag);
        }
        if (round % 3 === 2) socket.destroy();
        else socket.end();
        await closed;
      } finally {
        socket.destroy();
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, (_, lane) => client(lane)));
});
