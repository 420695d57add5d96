/**
 * The @grpc/grpc-js internals plugins/grpc/direct-calls.ts relies on, checked
 * on a real channel to a real @grpc/grpc-js server. The router falls back to
 * `Channel#createCall` without a word when one of them is missing, so this
 * is where a change shows: each failure names the internal and the version.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { DirectPath, frameMessage, missingInternals, type SubchannelCall, type SubchannelListener } from '../../../plugins/grpc/direct-calls.js';
import { GrpcChannels } from '../../../plugins/grpc/grpc-channels.js';

const PATH = '/test.v1.EchoService/Echo';
const version = (JSON.parse(readFileSync(new URL('../../../node_modules/@grpc/grpc-js/package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Throws, naming what changed, unless `holds`. */
function relied(holds: boolean, what: string): void {
  if (!holds)
    throw new Error(
      `@grpc/grpc-js ${version} changed ${what}, which plugins/grpc/direct-calls.ts relies on: update DirectPath (and its module comment) or pin a version that has it`,
    );
}

let server: grpc.Server;
let target: string;
let client: grpc.Client;

beforeAll(async () => {
  server = new grpc.Server();
  const raw = (bytes: Buffer) => bytes;
  server.addService(
    { Echo: { path: PATH, requestStream: false, responseStream: false, requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw } },
    { Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => callback(null, Buffer.concat([Buffer.from('echo '), call.request])) },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  target = `dns:///127.0.0.1:${port}`;
  client = new grpc.Client(target, grpc.credentials.createInsecure());
  await new Promise<void>((resolve, reject) => client.waitForReady(Date.now() + 10_000, (error) => (error ? reject(error) : resolve())));
});

afterAll(async () => {
  client?.close();
  await new Promise<void>((resolve) => server?.tryShutdown(() => resolve()));
});

/** The channel's internals as direct-calls.ts reads them (shapes unknown until checked). */
function internalOf(channel: grpc.ChannelInterface): Record<string, unknown> {
  return (channel as unknown as { internalChannel: Record<string, unknown> }).internalChannel;
}

describe('the @grpc/grpc-js internals behind direct subchannel calls', () => {
  it('include the public enums the direct path compares against', () => {
    relied(typeof grpc.experimental.PickResultType?.COMPLETE === 'number', 'experimental.PickResultType.COMPLETE (a public enum)');
    relied(typeof grpc.connectivityState?.READY === 'number', 'connectivityState.READY (a public enum)');
  });

  it('are all on a connected channel: internalChannel, doPick() and defaultAuthority', () => {
    const channel = client.getChannel();
    const missing = missingInternals(channel);
    relied(missing.length === 0, missing.join(', '));
    expect(DirectPath.of(channel, grpc)).toBeInstanceOf(DirectPath);
  });

  it('pick a ready subchannel with no call tracking, whose real subchannel creates calls', () => {
    const internal = internalOf(client.getChannel());
    const pick = (internal.doPick as (metadata: grpc.Metadata, extra: Record<string, string>) => Record<string, unknown>).call(internal, new grpc.Metadata(), {});
    relied(pick.pickResultType === grpc.experimental.PickResultType.COMPLETE, `the pick result's pickResultType (got ${String(pick.pickResultType)})`);
    for (const key of ['onCallStarted', 'onCallEnded']) relied(key in pick && !pick[key], `the pick result's ${key} (set, or gone)`);
    const subchannel = pick.subchannel as Record<string, unknown> | null;
    relied(typeof subchannel === 'object' && subchannel !== null, "the pick result's subchannel");
    relied(typeof subchannel!.getConnectivityState === 'function', 'SubchannelInterface#getConnectivityState()');
    relied((subchannel!.getConnectivityState as () => number).call(subchannel) === grpc.connectivityState.READY, 'the picked subchannel being READY on a ready channel');
    relied(typeof subchannel!.getRealSubchannel === 'function', 'SubchannelInterface#getRealSubchannel()');
    const real = (subchannel!.getRealSubchannel as () => Record<string, unknown>).call(subchannel);
    relied(typeof real.createCall === 'function', 'Subchannel#createCall()');
  });

  it('make a subchannel call that takes a framed request and reports metadata, the framed answer and the status', async () => {
    const internal = internalOf(client.getChannel());
    const pick = (internal.doPick as (metadata: grpc.Metadata, extra: Record<string, string>) => { subchannel: { getRealSubchannel(): Record<string, unknown> } }).call(
      internal,
      new grpc.Metadata(),
      {},
    );
    const real = pick.subchannel.getRealSubchannel();
    const seen: { metadata?: unknown; messages: Buffer[]; status?: grpc.StatusObject } = { messages: [] };
    const done = new Promise<void>((resolve) => {
      const listener: SubchannelListener = {
        onReceiveMetadata: (metadata) => (seen.metadata = metadata),
        onReceiveMessage: (framed) => seen.messages.push(framed),
        onReceiveStatus: (status) => {
          seen.status = status;
          resolve();
        },
      };
      const call = (real.createCall as (...args: unknown[]) => Partial<SubchannelCall>).call(real, new grpc.Metadata(), internal.defaultAuthority, PATH, listener);
      for (const method of ['sendMessageWithContext', 'halfClose', 'startRead', 'cancelWithStatus'] as const)
        relied(typeof call[method] === 'function', `SubchannelCall#${method}()`);
      call.sendMessageWithContext!({}, frameMessage(Buffer.from('hello')));
      call.halfClose!();
      call.startRead!();
    });
    await Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error(`@grpc/grpc-js ${version}: a subchannel call never reported its status`)), 5_000))]);
    relied(seen.metadata instanceof grpc.Metadata, 'the listener onReceiveMetadata(Metadata)');
    relied(seen.messages.length === 1 && Buffer.isBuffer(seen.messages[0]), 'the listener onReceiveMessage(Buffer) (one message per call)');
    relied(seen.messages[0]!.subarray(0, 5).equals(frameMessage(Buffer.from('echo hello')).subarray(0, 5)), 'the message onReceiveMessage gets: with its 5-byte frame header');
    expect(seen.messages[0]!.subarray(5).toString()).toBe('echo hello');
    relied(seen.status?.code === grpc.status.OK && seen.status.metadata instanceof grpc.Metadata, 'the listener onReceiveStatus({ code, details, metadata })');
  });

  it('carry the router’s calls once its channel is connected, none falling back to the channel', async () => {
    const channels = new GrpcChannels();
    try {
      const options = () => ({ deadline: Date.now() + 5_000, headers: {}, signal: new AbortController().signal });
      // The first call connects the channel and goes through it; the rest find it ready.
      expect((await channels.call(target, PATH, Buffer.from('one'), options())).toString()).toBe('echo one');
      const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => channels.call(target, PATH, Buffer.from(`call ${i}`), options())));
      expect(answers.map(String)).toEqual(Array.from({ length: 5 }, (_, i) => `echo call ${i}`));
      const counts = channels.pathCounts(target);
      relied(counts !== undefined, 'what DirectPath.of checks (no direct path for a real channel)');
      relied(counts!.direct === 5, `what a call on the direct path uses (${counts!.direct} of 5 calls direct, ${counts!.channel - 1} fell back to the channel)`);
    } finally {
      channels.close();
    }
  });
});
