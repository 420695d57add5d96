import type { Profile } from 'pprof-format';
import { ProfileBuilder } from './profile-builder.js';
import type { RuntimeSnapshot } from './runtime-snapshot.js';
import { syntheticFrame } from './stack-frames.js';

/** Root frame of the resource samples: what the main thread's event loop is waiting on. */
export const EVENT_LOOP_FRAME = '(event loop of the main thread)';

/**
 * Node's stand-in for Go's goroutine profile (sample type
 * `goroutine/count`, kept for tools that expect it): one sample per
 * JavaScript thread with its current stack (label `kind=thread`), and one
 * sample per type of active libuv handle or request with how many there
 * are (label `kind=resource`, `resource=<type>`); those are the pending
 * I/O, sockets and timers whose callbacks the loop will run.
 */
export function goroutineProfile(snapshot: RuntimeSnapshot, startMs: number): Profile {
  const builder = new ProfileBuilder([['goroutine', 'count']], { startMs });
  for (const thread of snapshot.threads) {
    builder.addSample(thread.frames, [1], { kind: 'thread', thread: thread.kind, thread_id: thread.threadId });
  }
  for (const [type, count] of snapshot.resources) {
    builder.addSample([syntheticFrame(type), syntheticFrame(EVENT_LOOP_FRAME)], [count], { kind: 'resource', resource: type });
  }
  return builder.build();
}

/** The `debug=2` text: every thread's full stack, then the event loop's resources, as Go prints goroutines. */
export function goroutineFullText(snapshot: RuntimeSnapshot): string {
  const blocks = snapshot.threads.map((thread) => {
    const frames = thread.frames.map((frame) => `${frame.name}\n\t${frame.file}${frame.line > 0 ? `:${frame.line}` : ''}`);
    return [`thread ${thread.threadId} [${thread.kind}, running JavaScript]:`, ...frames].join('\n');
  });
  const total = [...snapshot.resources.values()].reduce((sum, count) => sum + count, 0);
  const resources = [...snapshot.resources].sort(([a], [b]) => (a < b ? -1 : 1)).map(([type, count]) => `\t${type} x${count}`);
  blocks.push([`${EVENT_LOOP_FRAME} [${total} active handles and requests]:`, ...resources].join('\n'));
  return `${blocks.join('\n\n')}\n`;
}
