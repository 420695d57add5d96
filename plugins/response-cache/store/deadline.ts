/** Told by a store each time it hears back from the server during one operation. */
export type Progress = () => void;

/**
 * Runs `operation` and rejects with `timedOut()` when it goes `ms` without an
 * answer: since it began, or since it last reported progress. A one-command
 * read is bounded by `ms` in all; a long invalidation (many deletes, each
 * answered) runs as long as the store keeps answering, yet one that stopped
 * answering (frozen, overloaded, a half-open connection) is given up after
 * `ms`. The Redis client's own command timeout covers only the wait before a
 * command is sent, hence this. The abandoned operation goes on; a late reply
 * still reaches the client in order, so giving up cannot mix replies up.
 */
export function withDeadline<T>(operation: (progress: Progress) => Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut()), ms);
  });
  // refresh() restarts the countdown; never after the race is over (it would start a cleared timer again).
  const work = operation(() => {
    if (!settled) timer?.refresh();
  });
  // The abandoned operation may still fail later; its rejection is expected and handled here.
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => {
    settled = true;
    clearTimeout(timer);
  });
}
