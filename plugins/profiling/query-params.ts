import { RouterError } from '../../src/index.js';

/** Default capture length of `/debug/pprof/profile` and `/debug/pprof/block`, as in Go. */
export const DEFAULT_SECONDS = 30;

/** Longest capture accepted. */
export const MAX_SECONDS = 300;

function badParameter(message: string): RouterError {
  return new RouterError('PROFILING_BAD_PARAMETER', message, { status: 400, plugin: 'profiling' });
}

/** `seconds`: a whole number from 1 to 300; absent means 30. */
export function readSeconds(params: URLSearchParams): number {
  const text = params.get('seconds');
  if (text === null) return DEFAULT_SECONDS;
  const value = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(value >= 1 && value <= MAX_SECONDS)) {
    throw badParameter(`seconds must be a whole number from 1 to ${MAX_SECONDS}, got ${JSON.stringify(text.slice(0, 40))}`);
  }
  return value;
}

/** `debug`: 0 (pprof protobuf) up to `max` (text forms); absent means 0. */
export function readDebug(params: URLSearchParams, max: number): number {
  const text = params.get('debug');
  if (text === null) return 0;
  const value = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(value >= 0 && value <= max)) {
    const got = JSON.stringify(text.slice(0, 40));
    if (max === 0) throw badParameter(`debug must be 0 on this path (it has no text form), got ${got}`);
    const accepted = Array.from({ length: max + 1 }, (_, index) => index).join(', ');
    throw badParameter(`debug must be one of ${accepted} on this path, got ${got}`);
  }
  return value;
}

/** Refuses `seconds` on paths that answer at once (Go's delta profiles are not offered). */
export function refuseSeconds(params: URLSearchParams, path: string): void {
  if (params.has('seconds')) {
    throw badParameter(`seconds is not accepted on ${path}: it answers at once (only /debug/pprof/profile and /debug/pprof/block capture over time)`);
  }
}
