/**
 * Calls straight on the channel's ready subchannel (plugins/grpc/direct-calls.ts):
 * taken once the channel is connected, with the deadline sent and kept, the
 * request cancellable, compressed answers read, a refused stream retried,
 * and the channel's own path whenever the direct one cannot be used.
 */
import http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { DirectPath, timeoutHeader } from '../../../plugins/grpc/direct-calls.js';
import { GrpcChannels, InvalidAnswerError, RpcStatusError } from '../../../plugins/grpc/grpc-channels.js';
import { startBareService, until } from './bare-service.js';

const PATH = '/test.v1.TestService/Call';

/** One call the test service received. */
interface ReceivedCall {
  readonly headers: http2.IncomingHttpHeaders;
  readonly body: Buffer;
  reset: boolean;
}

type Answer = (stream: http2.ServerHttp2Stream, call: ReceivedCall, index: number) => void;

/** A service whose answers the test decides; records every call. */
async function startService(answer: Answer) {
  const calls: ReceivedCall[] = [];
  const service = await startBareService((stream, headers) => {
    const chunks: Buffer[] = [];
    const call: ReceivedCall = { headers, body: Buffer.alloc(0), reset: false };
    stream.on('aborted', () => (call.reset = true));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      (call as { body: Buffer }).body = Buffer.concat(chunks);
      calls.push(call);
      answer(stream, call, calls.length - 1);
    });
    stream.on('error', () => {});
  });
  return { ...service, calls };
}

function framed(message: Buffer, compressed = false): Buffer {
  const frame = Buffer.alloc(5 + message.length);
  frame[0] = compressed ? 1 : 0;
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  return frame;
}

/** Answers with `message` (echoing the request's message when none is given) and status OK. */
function ok(stream: http2.ServerHttp2Stream, message: Buffer, headers: http2.OutgoingHttpHeaders = {}, compressed = false): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc', ...headers }, { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(framed(message, compressed));
}

const echo: Answer = (stream, call) => ok(stream, call.body.subarray(5));

let channels: GrpcChannels | undefined;
let service: Awaited<ReturnType<typeof startService>> | undefined;

afterEach(async () => {
  channels?.close();
  channels = undefined;
  await service?.close();
  service = undefined;
});

function call(target: string, message: string, options: { deadlineMs?: number; signal?: AbortSignal } = {}): Promise<Buffer> {
  return channels!.call(target, PATH, Buffer.from(message), {
    deadline: Date.now() + (options.deadlineMs ?? 5_000),
    headers: { 'x-request-id': 'r1' },
    signal: options.signal ?? new AbortController().signal,
  });
}

describe('direct subchannel calls', () => {
  it('take the call once the channel is connected; the first, made while it connects, goes through the channel', async () => {
    service = await startService(echo);
    channels = new GrpcChannels();
    expect((await call(service.target, 'first')).toString()).toBe('first');
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => call(service!.target, `call ${i}`)));
    expect(answers.map(String)).toEqual(Array.from({ length: 20 }, (_, i) => `call ${i}`));
    expect(channels.pathCounts(service.target)).toEqual({ channel: 1, direct: 20 });
    // What the service sees is a gRPC call as the channel makes it: the path, the metadata, a framed request.
    const last = service.calls.at(-1)!;
    expect(last.headers[':path']).toBe(PATH);
    expect(last.headers['content-type']).toBe('application/grpc');
    expect(last.headers.te).toBe('trailers');
    expect(last.headers['x-request-id']).toBe('r1');
    expect(last.body.subarray(5).toString()).toBe('call 19');
  });

  it('send the deadline as grpc-timeout and end the call at it with DEADLINE_EXCEEDED, resetting the stream', async () => {
    service = await startService((stream, received, index) => (index === 0 ? echo(stream, received, index) : undefined));
    channels = new GrpcChannels();
    await call(service.target, 'warm-up');
    const started = Date.now();
    const failure = await call(service.target, 'never answered', { deadlineMs: 200 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RpcStatusError);
    expect(failure).toMatchObject({ status: 4, statusName: 'DEADLINE_EXCEEDED' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(1_000);
    const timeout = String(service.calls[1]!.headers['grpc-timeout']);
    expect(timeout).toMatch(/^\d+m$/);
    expect(Number.parseInt(timeout, 10)).toBeGreaterThan(150);
    expect(Number.parseInt(timeout, 10)).toBeLessThanOrEqual(200);
    await until(() => service!.calls[1]!.reset);
    expect(channels.pathCounts(service.target)?.direct).toBe(1);
  });

  it('cancel the call when its request is aborted', async () => {
    service = await startService((stream, received, index) => (index === 0 ? echo(stream, received, index) : undefined));
    channels = new GrpcChannels();
    await call(service.target, 'warm-up');
    const client = new AbortController();
    const pending = call(service.target, 'given up on', { signal: client.signal });
    await until(() => service!.calls.length === 2);
    client.abort();
    await expect(pending).rejects.toMatchObject({ status: 1, statusName: 'CANCELLED' });
    await until(() => service!.calls[1]!.reset);
  });

  it('read an answer the service compressed although none was offered, as the channel would', async () => {
    service = await startService((stream, received, index) => {
      if (index === 0) return echo(stream, received, index);
      return ok(stream, gzipSync(Buffer.from('inflated answer')), { 'grpc-encoding': 'gzip' }, true);
    });
    channels = new GrpcChannels();
    await call(service.target, 'warm-up');
    expect((await call(service.target, 'compressed')).toString()).toBe('inflated answer');
    expect(service.calls[1]!.headers['grpc-accept-encoding']).toBeUndefined();
    expect(channels.pathCounts(service.target)?.direct).toBe(1);
  });

  it('fail a compressed answer it cannot read with INTERNAL, naming the encoding', async () => {
    service = await startService((stream, received, index) => {
      if (index === 0) return echo(stream, received, index);
      return ok(stream, Buffer.from('?'), { 'grpc-encoding': 'snappy' }, true);
    });
    channels = new GrpcChannels();
    await call(service.target, 'warm-up');
    await expect(call(service.target, 'snappy')).rejects.toMatchObject({ status: 13, details: expect.stringContaining('grpc-encoding "snappy"') });
  });

  it('send a stream the service refused before reading it once more, through the channel', async () => {
    service = await startService((stream, received, index) => {
      if (index === 1) return stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      echo(stream, received, index);
    });
    channels = new GrpcChannels();
    await call(service.target, 'warm-up');
    expect((await call(service.target, 'refused once')).toString()).toBe('refused once');
    expect(service.calls.map((received) => received.body.subarray(5).toString())).toEqual(['warm-up', 'refused once', 'refused once']);
    expect(channels.pathCounts(service.target)).toEqual({ channel: 1, direct: 1 });
  });

  it('wait out a deadline longer than a timer can hold instead of ending at once', async () => {
    service = await startService(echo);
    channels = new GrpcChannels();
    await call(service.target, 'warm-up');
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      expect((await call(service.target, 'thirty days', { deadlineMs: 30 * 24 * 3600 * 1000 })).toString()).toBe('thirty days');
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.name === 'TimeoutOverflowWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('end a refused call as UNAVAILABLE when the channel closed before it could be sent again', async () => {
    service = await startService((stream, received, index) => {
      if (index === 0) return echo(stream, received, index);
      channels!.close();
      stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    });
    channels = new GrpcChannels();
    await call(service.target, 'warm-up');
    await expect(call(service.target, 'refused, then closed')).rejects.toMatchObject({ status: 14 });
  });

  it('fail an answer that inflates past the size limit with RESOURCE_EXHAUSTED', async () => {
    const bomb = gzipSync(Buffer.alloc(65 * 1024 * 1024));
    service = await startService((stream, received, index) => (index === 0 ? echo(stream, received, index) : ok(stream, bomb, { 'grpc-encoding': 'gzip' }, true)));
    channels = new GrpcChannels();
    await call(service.target, 'warm-up');
    await expect(call(service.target, 'too large')).rejects.toMatchObject({ status: 8, details: expect.stringContaining('larger than 67108864') });
  });

  it('refuse an answer of two messages as soon as the second arrives, on either path', async () => {
    const twice: Answer = (stream, received, index) => {
      if (index === 0) return echo(stream, received, index);
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.concat([framed(Buffer.from('one')), framed(Buffer.from('two'))]));
    };
    for (const direct of [true, false]) {
      service = await startService(twice);
      channels = new GrpcChannels({ direct });
      await call(service.target, 'warm-up');
      const started = Date.now();
      await expect(call(service.target, 'twice', { deadlineMs: 5_000 })).rejects.toThrow(new InvalidAnswerError('Call answered with more than one message'));
      expect(Date.now() - started).toBeLessThan(2_500);
      channels.close();
      channels = undefined;
      await service.close();
      service = undefined;
    }
  });

  it('leave every call to the channel when switched off, with the same answers and errors', async () => {
    service = await startService((stream, received, index) => (index < 2 ? echo(stream, received, index) : undefined));
    channels = new GrpcChannels({ direct: false });
    expect((await call(service.target, 'one')).toString()).toBe('one');
    expect((await call(service.target, 'two')).toString()).toBe('two');
    await expect(call(service.target, 'late', { deadlineMs: 100 })).rejects.toMatchObject({ status: 4 });
    expect(channels.pathCounts(service.target)).toBeUndefined();
  });

  it('are not offered by a channel without the @grpc/grpc-js internals they need', async () => {
    const grpc = await import('@grpc/grpc-js');
    const stub = { getConnectivityState: () => 2 } as unknown as Parameters<typeof DirectPath.of>[0];
    expect(DirectPath.of(stub, grpc)).toBeUndefined();
    expect(DirectPath.of(Object.assign(stub, { internalChannel: { doPick: () => undefined } }), grpc)).toBeUndefined();
  });
});

describe('grpc-timeout', () => {
  it('is the time left in milliseconds, at least 1, and in seconds past 8 digits', () => {
    expect(timeoutHeader(10_250, 10_000)).toBe('250m');
    expect(timeoutHeader(10_000, 10_000)).toBe('1m');
    expect(timeoutHeader(5_000, 10_000)).toBe('1m');
    expect(timeoutHeader(200_000_000, 0)).toBe('200000S');
  });
});
