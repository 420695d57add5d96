import { readdirSync } from 'node:fs';
import type { Frame } from './profile-builder.js';
import { parseStackLines } from './stack-frames.js';

/** The JavaScript stack of one thread at the moment of the snapshot. */
export interface ThreadStack {
  /** `0` for the main thread, else the worker's `threadId`. */
  readonly threadId: number;
  readonly kind: 'main' | 'worker';
  /** Top of the stack first. */
  readonly frames: readonly Frame[];
}

/** What the goroutine and threadcreate profiles are made of. */
export interface RuntimeSnapshot {
  /** The main thread (running the profiling handler itself) and every worker thread, nested ones included. */
  readonly threads: readonly ThreadStack[];
  /** Active libuv handles and requests of the main thread's event loop, by type (`TCPSocketWrap`, `Timeout`, ...). */
  readonly resources: ReadonlyMap<string, number>;
  /** Operating system threads of the process (Linux); `undefined` elsewhere. */
  readonly osThreads: number | undefined;
}

interface ReportPart {
  readonly header?: { readonly threadId?: unknown };
  readonly javascriptStack?: { readonly stack?: unknown };
  readonly workers?: unknown;
}

function isReportPart(value: unknown): value is ReportPart {
  return typeof value === 'object' && value !== null;
}

function stackOf(part: ReportPart): Frame[] {
  const stack = part.javascriptStack?.stack;
  return Array.isArray(stack) ? parseStackLines(stack.filter((line): line is string => typeof line === 'string')) : [];
}

function collectThreads(part: ReportPart, kind: ThreadStack['kind'], into: ThreadStack[]): void {
  const threadId = typeof part.header?.threadId === 'number' ? part.header.threadId : 0;
  into.push({ threadId, kind, frames: stackOf(part) });
  if (!Array.isArray(part.workers)) return;
  for (const worker of part.workers) if (isReportPart(worker)) collectThreads(worker, 'worker', into);
}

function countOsThreads(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return readdirSync('/proc/self/task').length;
  } catch {
    return undefined;
  }
}

/**
 * Node has no goroutines and no API listing threads, so this reads the
 * nearest truthful equivalents: the diagnostic report (it pauses each
 * worker thread briefly to read its JavaScript stack), the event loop's
 * active resources, and the kernel's thread list. Environment variables
 * in the report are never read.
 */
export function takeRuntimeSnapshot(): RuntimeSnapshot {
  const reporter: NodeJS.ProcessReport & { excludeNetwork?: boolean } = process.report;
  const excludeNetwork = reporter.excludeNetwork;
  // The network section resolves every socket's peer name synchronously; it is not needed here.
  reporter.excludeNetwork = true;
  let report: unknown;
  try {
    report = reporter.getReport();
  } finally {
    reporter.excludeNetwork = excludeNetwork;
  }
  const threads: ThreadStack[] = [];
  if (isReportPart(report)) collectThreads(report, 'main', threads);
  const resources = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) resources.set(type, (resources.get(type) ?? 0) + 1);
  return { threads, resources, osThreads: countOsThreads() };
}
