/**
 * Steady background traffic for fault tests: `concurrency` clients send
 * requests one after the other until stopped, and every answer is checked
 * and timed, so a test can inject a fault in the middle and then look at
 * what the clients saw.
 */

/** One answer a client saw. */
export interface LoadSample {
  /** When the request was sent, epoch milliseconds. */
  readonly at: number;
  /** How long it took, milliseconds. */
  readonly ms: number;
  /** Whether the answer was the expected one. */
  readonly ok: boolean;
  /** What was wrong with it, when not ok. */
  readonly problem?: string;
}

/** A running load; `stop()` waits for the requests in flight and returns every sample. */
export interface LoadLoop {
  readonly samples: readonly LoadSample[];
  stop(): Promise<LoadSample[]>;
}

/**
 * Runs `send` in `concurrency` loops; `send(i)` resolves with a problem
 * description, or undefined when the answer was right. The loops stop by
 * themselves after `maxMs`, so a test that fails before `stop()` leaves no
 * traffic running behind it.
 */
export function startLoad(send: (i: number) => Promise<string | undefined>, concurrency = 8, maxMs = 20_000): LoadLoop {
  const samples: LoadSample[] = [];
  let running = true;
  let next = 0;
  const deadline = Date.now() + maxMs;
  const loops = Array.from({ length: concurrency }, async () => {
    while (running && Date.now() < deadline) {
      const at = Date.now();
      let problem: string | undefined;
      try {
        problem = await send(next++);
      } catch (error) {
        problem = `threw: ${error instanceof Error ? error.message : String(error)}`;
      }
      samples.push({ at, ms: Date.now() - at, ok: problem === undefined, ...(problem === undefined ? {} : { problem }) });
    }
  });
  return {
    samples,
    async stop() {
      running = false;
      await Promise.all(loops);
      return samples;
    },
  };
}

/** The failed samples, each as its problem text (for a readable assertion). */
export function problems(samples: readonly LoadSample[]): string[] {
  return samples.filter((sample) => !sample.ok).map((sample) => sample.problem ?? 'failed');
}

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every 50 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(50);
  }
  throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
}
