import { heap } from '@datadog/pprof';
import type { ProfileData } from './profile-builder.js';

/** Average bytes allocated between two heap samples: Go's default rate. */
export const HEAP_SAMPLING_INTERVAL_BYTES = 512 * 1024;

/** Deepest stack a heap sample keeps. */
const HEAP_STACK_DEPTH = 64;

let users = 0;

/**
 * Starts V8's sampling heap profiler for as long as one user holds it (the
 * profiling listener, continuous profiling, or both; the profiler is
 * process-wide). It has to run before the allocations it should see, so it
 * starts with the plugin, not with the request. Returns the release function.
 */
export function acquireHeapSampler(): () => void {
  if (users === 0) heap.start(HEAP_SAMPLING_INTERVAL_BYTES, HEAP_STACK_DEPTH);
  users++;
  let released = false;
  return function releaseHeapSampler() {
    if (released) return;
    released = true;
    users--;
    if (users === 0) heap.stop();
  };
}

/** Live sampled allocations by stack (`inuse_objects`, `inuse_space`); the sampler must be held. */
export function takeHeapProfile(): ProfileData {
  return heap.profile();
}
