/**
 * Deadlines for store commands, shared by the operations store's Redis
 * provider and the APQ shared store: a Redis that stops answering (frozen,
 * overloaded, a half-open connection) must cost a request a bounded wait,
 * never a hang. A late reply is still matched to the command that sent it
 * (the client answers commands in order), so giving up is safe.
 */

/** Longest wait for one small Redis command on the request path (an operation, a tag, an APQ text). */
export const REDIS_COMMAND_TIMEOUT_MS = 500;

/** Longest wait for a whole manifest or registry, which may be megabytes; the HTTP store's deadline too. */
export const STORE_FILE_TIMEOUT_MS = 10_000;

/** Thrown when a command got no answer in time; `message` says how long was waited. */
export class CommandTimeoutError extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'CommandTimeoutError';
  }
}

/** `promise`, or a `CommandTimeoutError` once `ms` have passed without it settling. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CommandTimeoutError(ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
