/** The profiles the listener serves, as the index page lists them. */
export const PROFILE_DESCRIPTIONS: ReadonlyArray<readonly [path: string, description: string]> = [
  ['block', 'Where the event loop was blocked: stacks sampled while a due timer could not run (seconds, default 30).'],
  ['goroutine', "Stacks of the main thread and every worker thread, and the event loop's active handles and requests (debug=2: full stacks)."],
  ['heap', "Live objects sampled by V8's sampling heap profiler (every 512 KiB allocated on average)."],
  ['profile', 'CPU profile of the main thread (seconds, default 30, 1 to 300). One capture at a time.'],
  ['threadcreate', 'Threads of the process: main, worker threads, and native threads.'],
];

/** `GET /debug/pprof/`: links to every profile, in the spirit of Go's page. */
export function renderIndexPage(): string {
  const rows = PROFILE_DESCRIPTIONS.map(([path, description]) => `<li><a href="${path}?debug=${path === 'profile' ? 0 : 1}">${path}</a>: ${description}</li>`);
  return [
    '<!DOCTYPE html>',
    '<html><head><title>/debug/pprof/</title></head><body>',
    '<h1>/debug/pprof/</h1>',
    '<p>Profiles of this Switchyard router process. Add <code>?debug=1</code> for text; without it each path answers a gzipped pprof protobuf (<code>go tool pprof</code>, Pyroscope).</p>',
    `<ul>\n${rows.join('\n')}\n</ul>`,
    '</body></html>',
    '',
  ].join('\n');
}
