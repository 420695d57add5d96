/**
 * Host patterns of `cors.allow_origins` (`*.example.com`, `app-*.example.net`,
 * `*.*.example.org`): `*` stands for one or more host labels or part of one,
 * that is a non-empty run of the host that neither starts nor ends with `.`;
 * the text between the `*`s is literal.
 *
 * Matched without a regular expression: the Origin header is the client's,
 * and a regex with several such wildcards backtracks badly (a 300-character
 * Origin against `*.*.*.*.example.com` took most of a second). Here each
 * literal piece is found once, left to right, in time linear in the host for
 * a given pattern.
 */

const DOT = 0x2e;

/** A compiled host pattern: its literal pieces, split at each `*` (one piece when there is no `*`). */
export interface HostPattern {
  readonly pieces: readonly string[];
}

/**
 * Whether `host` (lower case, already checked to be a host name: labels of
 * `[a-z0-9-]` joined by single dots, or a bracketed IPv6 address) matches.
 */
export function hostMatches(pattern: HostPattern, host: string): boolean {
  const { pieces } = pattern;
  const last = pieces.length - 1;
  if (last === 0) return host === pieces[0];
  // A wildcard stands for name labels, never for part of an IPv6 address.
  if (host.charCodeAt(0) === 0x5b) return false;
  const head = pieces[0]!;
  const tail = pieces[last]!;
  if (!host.startsWith(head) || !host.endsWith(tail)) return false;
  /** Where the tail starts: the last wildcard's span ends there. */
  const end = host.length - tail.length;
  /** Where the current wildcard's span starts. */
  let from = head.length;
  for (let i = 1; i < last; i++) {
    if (host.charCodeAt(from) === DOT) return false;
    const piece = pieces[i]!;
    // The leftmost place that leaves both neighbouring spans well formed (no
    // `.` at their edges) is the best one: it leaves the most room to the rest.
    let at = host.indexOf(piece, from + 1);
    while (at !== -1 && at + piece.length < end && (host.charCodeAt(at - 1) === DOT || host.charCodeAt(at + piece.length) === DOT)) {
      at = host.indexOf(piece, at + 1);
    }
    if (at === -1 || at + piece.length >= end) return false;
    from = at + piece.length;
  }
  return end > from && host.charCodeAt(from) !== DOT && host.charCodeAt(end - 1) !== DOT;
}
