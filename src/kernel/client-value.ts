/**
 * Cutting strings a client chose (operation names, client names, error
 * messages quoting a field, persisted ids) before they are kept: on spans
 * waiting in an export queue, or in log lines. In the SDK, so that every
 * plugin (telemetry, persisted-operations, yours) cuts them the same way.
 */

/**
 * Longest client-supplied value in a log line (access logs, `log_unknown`)
 * and in a `persisted_operation.lookup` event, in characters; a longer one is
 * cut and ends with `…`, so one line never grows with the request body.
 */
export const MAX_CLIENT_VALUE_LENGTH = 256;

/**
 * The first `max` UTF-16 code units of `value` (one fewer when the last would
 * be the first half of a surrogate pair, so no lone surrogate is left), as a
 * string of its own.
 *
 * Why not just `value.slice(0, max)`: V8 returns a long slice as a view on
 * its parent (a "sliced string"), which keeps the whole parent alive. A span
 * waiting in the exporter's queue would then hold the client's 900 KB
 * document instead of the 16 KiB it shows. Prepending a character makes a
 * rope that the second `slice` flattens into a new string of `max + 1`
 * characters; the result is a view on that copy only.
 */
export function cutString(value: string, max: number): string {
  if (value.length <= max) return value;
  let end = max;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return ` ${value.slice(0, end)}`.slice(1);
}

/** A value the client chose, cut to `MAX_CLIENT_VALUE_LENGTH` characters, the last being `…` (never inside a surrogate pair). */
export function clientValue(value: string | undefined): string | undefined {
  if (value === undefined || value.length <= MAX_CLIENT_VALUE_LENGTH) return value;
  return `${cutString(value, MAX_CLIENT_VALUE_LENGTH - 1)}\u2026`;
}
