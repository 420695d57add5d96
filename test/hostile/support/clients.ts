/**
 * Clients a hostile test needs: plain HTTP requests with exactly the
 * headers given (no client adds a `Content-Type`), raw bytes on a socket,
 * connections reset (RST) at chosen moments, and slowloris sockets that
 * trickle a request forever.
 */
import { request, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';

/** One answer. `status` 0: no HTTP answer (the connection failed or was closed). */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly ms: number;
  /** Why there was no answer. */
  readonly error?: string;
}

/** One request on its own connection, headers exactly as given; resolves (never rejects) within `timeoutMs`. */
export function send(
  base: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer; timeoutMs?: number } = {},
): Promise<Answer> {
  const url = new URL(options.path ?? '/graphql', base);
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (answer: Omit<Answer, 'ms'>) => resolve({ ...answer, ms: performance.now() - started });
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        method: options.method ?? 'POST',
        agent: false,
        headers: { connection: 'close', ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (error) => done({ status: 0, headers: res.headers, text: '', error: error.message }));
      },
    );
    req.setTimeout(options.timeoutMs ?? 10_000, () => req.destroy(new Error(`no answer within ${options.timeoutMs ?? 10_000}ms`)));
    req.on('error', (error) => done({ status: 0, headers: {}, text: '', error: (error as NodeJS.ErrnoException).code ?? error.message }));
    req.end(options.body);
  });
}

/** A JSON POST to `/graphql`. */
export function postGraphql(base: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return send(base, { headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

/** `errors[0].extensions.code` of a GraphQL answer, if any. */
export function errorCode(answer: Answer): string | undefined {
  try {
    return (JSON.parse(answer.text) as { errors?: Array<{ extensions?: { code?: string } }> }).errors?.[0]?.extensions?.code;
  } catch {
    return undefined;
  }
}

/** What a raw exchange got: the status line's code if the server answered, and whether it closed the connection. */
export interface RawAnswer {
  /** From `HTTP/1.1 <status>`; 0 when nothing HTTP/1 came back. */
  readonly status: number;
  readonly closed: boolean;
  readonly bytes: number;
}

function connected(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Writes `data`, half-closes nothing, and reads until the server closes or `waitMs` passes. */
export async function raw(port: number, data: string | Buffer, waitMs = 1_000): Promise<RawAnswer> {
  const socket = await connected(port);
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      socket.destroy();
      resolve({ status: status ? Number(status) : 0, closed, bytes: text.length });
    };
    const timer = setTimeout(finish, waitMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('close', () => {
      closed = true;
      finish();
    });
    socket.write(data);
  });
}

/** Connects, writes `data` (maybe nothing), waits `afterMs`, then resets the connection (TCP RST). */
export async function resetAfter(port: number, data: string | Buffer, afterMs = 0): Promise<void> {
  const socket = await connected(port);
  socket.on('error', () => undefined);
  if (data.length > 0) socket.write(data);
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  if (!socket.destroyed) socket.resetAndDestroy();
}

/** A slowloris socket: a request that never completes, one byte at a time. */
export interface Slowloris {
  readonly kind: 'idle' | 'headers' | 'body';
  readonly port: number;
  readonly openedAt: number;
  /** When the server closed it; undefined while open. */
  readonly closedAt: number | undefined;
  /** The HTTP status the server answered with before closing, if any. */
  readonly status: number;
  stop(): void;
}

/**
 * Opens a connection and sends a request slowly forever: `idle` sends
 * nothing at all; `headers` sends an endless header section (`X-a: b`
 * lines, one byte per `everyMs`); `body` sends complete headers announcing a
 * 1 MB JSON body to `path`, then one byte per `everyMs`.
 */
export async function slowloris(port: number, kind: 'idle' | 'headers' | 'body', options: { everyMs?: number; path?: string } = {}): Promise<Slowloris> {
  const { everyMs = 1_000, path = '/graphql' } = options;
  const socket = await connected(port);
  const openedAt = Date.now();
  let closedAt: number | undefined;
  let answer = '';
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
  socket.on('close', () => {
    closedAt ??= Date.now();
    clearInterval(timer);
  });
  const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n`;
  if (kind === 'headers') socket.write(head);
  if (kind === 'body') socket.write(`${head}Content-Length: 1000000\r\n\r\n["`);
  let i = 0;
  const drip = kind === 'headers' ? 'X-a: b\r\n' : ' ';
  const timer = setInterval(() => {
    if (kind !== 'idle' && !socket.destroyed) socket.write(drip[i++ % drip.length]!);
  }, everyMs);
  return {
    kind,
    port,
    openedAt,
    get closedAt() {
      return closedAt;
    },
    get status() {
      return Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 0);
    },
    stop: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}
