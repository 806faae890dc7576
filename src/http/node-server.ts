import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { clientErrorAnswer, rawDetail } from './raw-answer.js';
import { checkingInterval, type ServerLimits } from './limits.js';
import { PipelineCap } from './pipeline-cap.js';

/** After answering a refused request, how long the rest of what the client sends is read and dropped. */
const LINGER_MS = 2000;

export interface HttpServerOptions {
  readonly limits: ServerLimits;
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  /** The complete answer (bytes) to a CONNECT request, which node:http hands over without a response. */
  readonly answerConnect: (req: IncomingMessage) => Promise<Buffer>;
}

/**
 * node:http with the server's limits, and JSON answers with the reference's headers where node
 * would answer on its own: a malformed request (400), headers too large (431), a client too
 * slow (408). Each such answer closes the connection. A connection with limits.maxPipelinedRequests
 * requests waiting for their answers is read no further until fewer wait (pipeline-cap.ts).
 */
export function createHttpServer(options: HttpServerOptions): Server {
  const { limits } = options;
  const cap = new PipelineCap(limits.maxPipelinedRequests, limits.headersTimeout);
  const server = createServer(
    {
      maxHeaderSize: limits.maxHeaderSize,
      headersTimeout: limits.headersTimeout,
      requestTimeout: limits.requestTimeout,
      keepAliveTimeout: limits.keepAliveTimeout,
      connectionsCheckingInterval: checkingInterval(limits),
    },
    cap.handler(options.handler),
  );
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (answered.has(socket)) return; // the parser reports each further chunk again
    // A request cut by a held read (pipeline-cap.ts): told only if still cut once reading resumed.
    if (
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT' &&
      cap.putOff(socket as Socket, () => server.emit('clientError', error, socket))
    )
      return;
    answered.add(socket);
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    const answer = clientErrorAnswer(error.code, limits);
    if (!answer || !socket.writable || inFlight?.headersSent) return void socket.destroy();
    if (inFlight) {
      // A handler holds this request (a POST body that stopped): answer now, as node does, and close.
      socket.write(rawDetail(answer));
      return void socket.destroy();
    }
    closeWith(socket, rawDetail(answer));
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    socket.on('error', () => socket.destroy());
    socket.resume();
    options.answerConnect(req).then(
      (bytes) => closeWith(socket, bytes),
      () => socket.destroy(),
    );
  });
  return server;
}

/**
 * Sends a last answer and half-closes; whatever the client still sends is dropped until it
 * closes too (or LINGER_MS passes), so its unread bytes do not turn our FIN into a reset that
 * would destroy the answer before the client reads it.
 */
function closeWith(socket: Duplex, bytes: Buffer): void {
  socket.end(bytes);
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
