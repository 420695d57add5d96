/**
 * The gRPC bench service's HTTP/2 server (bench/servers/h2-responder.ts):
 * real clients (@grpc/grpc-js, node:http2) get every answer whole, however
 * it is framed or flow-controlled, and bad input gets a gRPC status or a
 * GOAWAY rather than a hang.
 */
import { connect as connectHttp2, constants, type ClientHttp2Session } from 'node:http2';
import { connect as connectTcp, type Server } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startH2Responder, type UnaryAnswer } from '../../bench/servers/h2-responder.js';

const METHOD = '/bench.v1.Echo/Call';
let server: Server;
let port: number;
let calls = 0;

/** Answers `size:<n>` with n bytes, `status:<code>` with that status, `throw` by throwing; anything else echoed. */
function answer(request: Buffer): UnaryAnswer {
  const text = request.toString('latin1');
  if (text.startsWith('size:')) return { message: Buffer.alloc(Number(text.slice(5)), 7) };
  if (text.startsWith('status:')) return { status: Number(text.slice(7)), details: 'asked for it: yes, 100% sure, café' };
  if (text === 'throw') throw new Error('cannot decode the request');
  return { message: request };
}

beforeAll(async () => {
  ({ server, port } = await startH2Responder({ answer, onCall: () => calls++, maxRequestBytes: 1024 }));
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function grpcFrame(message: Buffer): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** One unary call with @grpc/grpc-js, bytes in and out. */
function grpcCall(client: grpc.Client, request: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      METHOD,
      (value: Buffer) => value,
      (value: Buffer) => value,
      request,
      (error: grpc.ServiceError | null, response?: Buffer) => (error ? reject(error) : resolve(response!)),
    );
  });
}

/** One call on a bare node:http2 session: the body and the trailers' status. */
function http2Call(session: ClientHttp2Session, body: Buffer): Promise<{ body: Buffer; status: string | undefined; message: string | undefined }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': METHOD, 'content-type': 'application/grpc', te: 'trailers' });
    const chunks: Buffer[] = [];
    let status: string | undefined;
    let message: string | undefined;
    const read = (headers: Record<string, unknown>) => {
      if (headers['grpc-status'] !== undefined) status = String(headers['grpc-status']);
      if (headers['grpc-message'] !== undefined) message = decodeURIComponent(String(headers['grpc-message']));
    };
    stream.on('response', read);
    stream.on('trailers', read);
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve({ body: Buffer.concat(chunks), status, message }));
    stream.on('error', reject);
    stream.end(body);
  });
}

describe('the bench gRPC responder', () => {
  it("gives @grpc/grpc-js a failed call's status and message intact", async () => {
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    try {
      const failure = await grpcCall(client, Buffer.from('status:5')).catch((error: grpc.ServiceError) => error);
      expect(failure).toMatchObject({ code: 5, details: 'asked for it: yes, 100% sure, café' });
    } finally {
      client.close();
    }
  });

  it('refuses a request larger than its limit at once, even one larger than the stream window, and keeps the connection', async () => {
    const small = await startH2Responder({ answer, windowBytes: 65_535, maxRequestBytes: 1024 });
    const session = connectHttp2(`http://127.0.0.1:${small.port}`);
    try {
      expect(await http2Call(session, grpcFrame(Buffer.alloc(200_000)))).toMatchObject({ status: '8', message: expect.stringContaining('larger than 1024 bytes') });
      expect(await http2Call(session, grpcFrame(Buffer.from('next')))).toMatchObject({ status: '0', body: grpcFrame(Buffer.from('next')) });
    } finally {
      session.close();
      small.server.close();
    }
  });

  it('refuses settings it cannot serve', async () => {
    await expect(startH2Responder({ answer, windowBytes: 1000 })).rejects.toThrow(/windowBytes must be an integer from 65535/);
    await expect(startH2Responder({ answer, windowBytes: 65_535, maxRequestBytes: 65_535 })).rejects.toThrow(/maxRequestBytes must be/);
  });

  it('finishes the calls in flight when the client closes the connection gracefully (GOAWAY)', async () => {
    // A 1 MiB answer through a 16 KiB window is still in flight when the client closes.
    const session = connectHttp2(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 16_384 } });
    const stream = session.request({ ':method': 'POST', ':path': METHOD, 'content-type': 'application/grpc', te: 'trailers' });
    const chunks: Buffer[] = [];
    let status: unknown;
    stream.on('trailers', (trailers) => (status = trailers['grpc-status']));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise<void>((resolve, reject) => stream.on('end', resolve).on('error', reject));
    stream.once('response', () => session.close());
    stream.end(grpcFrame(Buffer.from('size:1048576')));
    await ended;
    expect(status).toBe('0');
    expect(Buffer.concat(chunks).length).toBe(5 + 1_048_576);
  });

  it('serves a client that wants no HPACK dynamic table', async () => {
    const session = connectHttp2(`http://127.0.0.1:${port}`, { settings: { headerTableSize: 0 } });
    try {
      expect(await http2Call(session, grpcFrame(Buffer.from('tiny table')))).toMatchObject({ status: '0', body: grpcFrame(Buffer.from('tiny table')) });
      expect(await http2Call(session, grpcFrame(Buffer.from('status:7')))).toMatchObject({ status: '7' });
    } finally {
      session.close();
    }
  });

  it('answers @grpc/grpc-js unary calls, many at once, and counts each call', async () => {
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    try {
      const before = calls;
      const requests = Array.from({ length: 300 }, (_, i) => Buffer.from(`call ${i}`));
      const answers = await Promise.all(requests.map((request) => grpcCall(client, request)));
      expect(answers.map((answer) => answer.toString())).toEqual(requests.map((request) => request.toString()));
      expect(calls - before).toBe(300);
    } finally {
      client.close();
    }
  });

  it('splits a large answer into frames the client accepts and waits for its flow-control window', async () => {
    // 16 KiB frames (the default) and a 16 KiB window a stream, so 1 MiB needs many frames and WINDOW_UPDATEs.
    const session = connectHttp2(`http://127.0.0.1:${port}`, { settings: { initialWindowSize: 16_384 } });
    try {
      const answers = await Promise.all([1, 2, 3].map(() => http2Call(session, grpcFrame(Buffer.from('size:1048576')))));
      for (const { body, status } of answers) {
        expect(status).toBe('0');
        expect(body.length).toBe(5 + 1_048_576);
        expect(body.readUInt32BE(1)).toBe(1_048_576);
        expect(body.subarray(5).every((byte) => byte === 7)).toBe(true);
      }
    } finally {
      session.close();
    }
  });

  it('answers a body that is not one gRPC frame, a failing decode and a refused call with a status, not a hang', async () => {
    const session = connectHttp2(`http://127.0.0.1:${port}`);
    try {
      expect(await http2Call(session, Buffer.from([0, 0, 0, 0, 9, 1]))).toMatchObject({ status: '3', message: expect.stringContaining('one uncompressed gRPC message frame') });
      expect(await http2Call(session, grpcFrame(Buffer.from('throw')))).toMatchObject({ status: '3', message: 'cannot decode the request' });
      expect(await http2Call(session, grpcFrame(Buffer.from('status:5')))).toMatchObject({ status: '5', message: 'asked for it: yes, 100% sure, café', body: Buffer.alloc(0) });
      expect(await http2Call(session, grpcFrame(Buffer.alloc(2000)))).toMatchObject({ status: '8', message: expect.stringContaining('larger than 1024 bytes') });
      // The connection still serves after each of them.
      expect(await http2Call(session, grpcFrame(Buffer.from('still here')))).toMatchObject({ status: '0', body: grpcFrame(Buffer.from('still here')) });
    } finally {
      session.close();
    }
  });

  it('answers a PING', async () => {
    const session = connectHttp2(`http://127.0.0.1:${port}`);
    try {
      await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
      const acknowledged = await new Promise<boolean>((resolve, reject) => session.ping((error) => (error ? reject(error) : resolve(true))));
      expect(acknowledged).toBe(true);
    } finally {
      session.close();
    }
  });

  it('keeps serving other streams when the client resets one', async () => {
    const session = connectHttp2(`http://127.0.0.1:${port}`);
    try {
      const stream = session.request({ ':method': 'POST', ':path': METHOD, 'content-type': 'application/grpc' });
      stream.write(Buffer.from([0, 0, 0]));
      stream.close(constants.NGHTTP2_CANCEL);
      expect(await http2Call(session, grpcFrame(Buffer.from('after reset')))).toMatchObject({ status: '0' });
    } finally {
      session.close();
    }
  });

  it('sends GOAWAY and closes a connection that does not start with the HTTP/2 preface', async () => {
    const socket = connectTcp(port, '127.0.0.1');
    const received: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const bytes = Buffer.concat(received);
    // Its SETTINGS and WINDOW_UPDATE, then a GOAWAY (type 7, no flags, stream 0) whose payload is
    // the last stream id, the error code PROTOCOL_ERROR (1) and the reason.
    const goaway = bytes.indexOf(Buffer.from([7, 0, 0, 0, 0, 0]));
    expect(goaway).toBeGreaterThan(0);
    expect(bytes.readUInt32BE(goaway + 6 + 4)).toBe(1);
    expect(bytes.subarray(goaway + 6 + 8).toString()).toContain('no HTTP/2 connection preface');
  });
});
