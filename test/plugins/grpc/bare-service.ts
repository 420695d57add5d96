/**
 * A gRPC service on bare node:http2 whose streams the test handles itself
 * (what @grpc/grpc-js's server hides: resets, refused streams, odd answers),
 * on 127.0.0.1; `close()` also ends the router's open sessions.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

/** A running bare service. */
export interface BareService {
  /** `dns:///127.0.0.1:<port>`. */
  readonly target: string;
  close(): Promise<void>;
}

/** Starts a service calling `onStream` for every stream. */
export async function startBareService(onStream: (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => void): Promise<BareService> {
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', onStream);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    target: `dns:///127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.destroy();
      }),
  };
}

/** Resolves once `condition` holds; fails the test after 3 s. */
export async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 3_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the service');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
