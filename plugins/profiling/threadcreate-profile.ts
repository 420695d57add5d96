import type { Profile } from 'pprof-format';
import { ProfileBuilder } from './profile-builder.js';
import type { RuntimeSnapshot } from './runtime-snapshot.js';
import { syntheticFrame } from './stack-frames.js';

/** Frame names of the thread kinds. */
export const THREAD_FRAMES = {
  main: '(main JavaScript thread)',
  worker: '(worker_threads Worker)',
  native: '(native threads: V8 platform, libuv pool, inspector, signal)',
} as const;

/**
 * Node's stand-in for Go's threadcreate profile (`threadcreate/count`).
 * Node records no stack where a thread was created, so each sample has one
 * frame naming the kind of thread: the main thread, each worker thread
 * (label `thread_id`), and on Linux the remaining operating system threads
 * of the process (V8's platform workers, the libuv pool once it has been
 * used, the inspector and signal threads), counted from /proc.
 */
export function threadcreateProfile(snapshot: RuntimeSnapshot, startMs: number): Profile {
  const builder = new ProfileBuilder([['threadcreate', 'count']], { startMs });
  for (const thread of snapshot.threads) {
    builder.addSample([syntheticFrame(THREAD_FRAMES[thread.kind])], [1], { kind: thread.kind, thread_id: thread.threadId });
  }
  if (snapshot.osThreads !== undefined) {
    const native = snapshot.osThreads - snapshot.threads.length;
    if (native > 0) builder.addSample([syntheticFrame(THREAD_FRAMES.native)], [native], { kind: 'native' });
  }
  return builder.build();
}
