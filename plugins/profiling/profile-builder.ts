import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { Function as PprofFunction, Label, Line, Location, Profile, Sample, StringTable, ValueType } from 'pprof-format';

type Numeric = number | bigint;

/**
 * The parts of a pprof profile this plugin reads. pprof-format's `Profile`
 * of either build satisfies it: the ESM one built here and the CommonJS one
 * @datadog/pprof returns (their classes differ, their shape does not).
 */
export interface ProfileData {
  readonly sampleType: ReadonlyArray<{ readonly type: Numeric; readonly unit: Numeric }>;
  readonly sample: ReadonlyArray<{
    readonly locationId: readonly Numeric[];
    readonly value: readonly Numeric[];
    readonly label: ReadonlyArray<{ readonly key: Numeric; readonly str: Numeric; readonly num: Numeric }>;
  }>;
  readonly location: ReadonlyArray<{ readonly id: Numeric; readonly line: ReadonlyArray<{ readonly functionId: Numeric; readonly line: Numeric }> }>;
  readonly function: ReadonlyArray<{ readonly id: Numeric; readonly name: Numeric; readonly filename: Numeric }>;
  readonly stringTable: { readonly strings: readonly string[] };
  /** The protobuf bytes, not compressed. */
  encode(): Uint8Array;
}

const gzipAsync = promisify(gzip);

/** A profile as served and pushed: gzipped pprof protobuf. */
export async function encodeProfile(profile: ProfileData): Promise<Buffer> {
  return gzipAsync(profile.encode());
}

/** One stack frame, as pprof stores it: function name, file, line. */
export interface Frame {
  /** Function name (`(anonymous)` when V8 has none). */
  readonly name: string;
  /** Script URL or path; `''` for synthetic frames. */
  readonly file: string;
  /** 1-based line; 0 when unknown. */
  readonly line: number;
}

/** Sample labels: text or numbers. */
export type SampleLabels = Readonly<Record<string, string | number>>;

/** A sample type: `[type, unit]`, for example `['cpu', 'nanoseconds']`. */
export type SampleType = readonly [type: string, unit: string];

/** Profile-wide fields of a built profile. */
export interface ProfileMeta {
  /** Start of the profile, epoch milliseconds. Default: now. */
  readonly startMs?: number;
  /** Length of the profile in milliseconds. Default: 0. */
  readonly durationMs?: number;
  /** What one period measures, for example `['cpu', 'nanoseconds']`. Default: none. */
  readonly periodType?: SampleType;
  /** Sampling period in `periodType` units. Default: 0. */
  readonly period?: number;
  /** Sample type `go tool pprof` shows first. Default: the last one. */
  readonly defaultSampleType?: string;
  /** Free-text comments shown by `go tool pprof -comments`. Default: none. */
  readonly comments?: readonly string[];
}

/** What `appendProfile` copies. */
export interface AppendOptions {
  /** Keeps only samples for which this returns true. Default: all. */
  readonly filter?: (labels: SampleLabels) => boolean;
  /** Label keys left out of the copy. Default: none. */
  readonly dropLabels?: readonly string[];
  /** Source sample type names to copy into differently named target types, `{ wall: 'delay' }`. Default: same names. */
  readonly renameTypes?: Readonly<Record<string, string>>;
}

/**
 * Builds a pprof profile from stacks, merging samples with the same stack
 * and labels. Used for the profiles V8 has no profiler for (threads, event
 * loop) and to merge time-profile chunks into one capture.
 */
export class ProfileBuilder {
  private readonly strings = new StringTable();
  private readonly functions = new Map<string, PprofFunction>();
  private readonly locations = new Map<string, Location>();
  private readonly samples = new Map<string, Sample>();
  private readonly typeIndex = new Map<string, number>();

  constructor(
    private readonly sampleTypes: readonly SampleType[],
    private readonly meta: ProfileMeta = {},
  ) {
    sampleTypes.forEach(([type], index) => this.typeIndex.set(type, index));
  }

  /** Adds one sample; `stack` is leaf first; `values` follow the sample types. */
  addSample(stack: readonly Frame[], values: readonly number[], labels: SampleLabels = {}): void {
    const locationIds = stack.map((frame) => this.locationId(frame));
    const labelEntries = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const key = `${locationIds.join(',')}|${JSON.stringify(labelEntries)}`;
    const existing = this.samples.get(key);
    if (existing) {
      existing.value = existing.value.map((value, index) => Number(value) + (values[index] ?? 0));
      return;
    }
    const label = labelEntries.map(([name, value]) =>
      typeof value === 'number' ? new Label({ key: this.strings.dedup(name), num: value }) : new Label({ key: this.strings.dedup(name), str: this.strings.dedup(value) }),
    );
    const padded = this.sampleTypes.map((_, index) => values[index] ?? 0);
    this.samples.set(key, new Sample({ locationId: locationIds, value: padded, label }));
  }

  /** Copies the samples of a decoded or freshly taken profile, matching sample types by name. */
  appendProfile(source: ProfileData, { filter, dropLabels = [], renameTypes = {} }: AppendOptions = {}): void {
    const text = (index: number | bigint): string => source.stringTable.strings[Number(index)] ?? '';
    const functions = new Map(source.function.map((fn) => [Number(fn.id), fn]));
    const stacks = new Map<number, Frame[]>();
    for (const location of source.location) {
      const frames = location.line.map((line): Frame => {
        const fn = functions.get(Number(line.functionId));
        return { name: fn ? text(fn.name) : '', file: fn ? text(fn.filename) : '', line: Number(line.line) };
      });
      // pprof lists inlined frames callee first, as the stack itself is.
      stacks.set(Number(location.id), frames);
    }
    const targetOf = source.sampleType.map((type) => {
      const name = text(type.type);
      return this.typeIndex.get(renameTypes[name] ?? name);
    });
    for (const sample of source.sample) {
      const labels: Record<string, string | number> = {};
      for (const label of sample.label) {
        const name = text(label.key);
        labels[name] = Number(label.str) !== 0 ? text(label.str) : Number(label.num);
      }
      if (filter && !filter(labels)) continue;
      for (const name of dropLabels) delete labels[name];
      const values = this.sampleTypes.map(() => 0);
      sample.value.forEach((value, index) => {
        const target = targetOf[index];
        if (target !== undefined) values[target] = Number(value);
      });
      const stack = sample.locationId.flatMap((id) => stacks.get(Number(id)) ?? []);
      this.addSample(stack, values, labels);
    }
  }

  /** The profile, ready for `encodeProfile`. */
  build(): Profile {
    const { startMs = Date.now(), durationMs = 0, periodType, period = 0, defaultSampleType, comments = [] } = this.meta;
    const valueType = ([type, unit]: SampleType) => new ValueType({ type: this.strings.dedup(type), unit: this.strings.dedup(unit) });
    const sampleType = this.sampleTypes.map(valueType);
    return new Profile({
      sampleType,
      sample: [...this.samples.values()],
      location: [...this.locations.values()],
      function: [...this.functions.values()],
      stringTable: this.strings,
      timeNanos: BigInt(Math.round(startMs)) * 1_000_000n,
      durationNanos: BigInt(Math.round(durationMs)) * 1_000_000n,
      ...(periodType === undefined ? {} : { periodType: valueType(periodType), period }),
      ...(defaultSampleType === undefined ? {} : { defaultSampleType: this.strings.dedup(defaultSampleType) }),
      comment: comments.map((comment) => this.strings.dedup(comment)),
    });
  }

  private locationId(frame: Frame): number {
    const key = `${frame.name}\u0000${frame.file}\u0000${frame.line}`;
    let location = this.locations.get(key);
    if (!location) {
      location = new Location({ id: this.locations.size + 1, line: [new Line({ functionId: this.functionId(frame), line: frame.line })] });
      this.locations.set(key, location);
    }
    return Number(location.id);
  }

  private functionId(frame: Frame): number {
    const key = `${frame.name}\u0000${frame.file}`;
    let fn = this.functions.get(key);
    if (!fn) {
      const name = this.strings.dedup(frame.name);
      fn = new PprofFunction({ id: this.functions.size + 1, name, systemName: name, filename: this.strings.dedup(frame.file) });
      this.functions.set(key, fn);
    }
    return Number(fn.id);
  }
}
