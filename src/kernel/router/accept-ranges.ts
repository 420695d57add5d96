/**
 * `Accept` read once for both negotiations of `/graphql`: the JSON type of a
 * single result (result-head.ts) and whether to stream (http-stream-request.ts),
 * so the two never read a header differently. RFC 9110 12.5.1: ranges in
 * order, each with its quality (`q=0`: not acceptable) and parameters.
 */

/** One range of `Accept`: media type (lower case, `*` wildcards), quality (0 to 1), parameters (the first of a name counts). */
export interface AcceptRange {
  readonly mediaType: string;
  readonly q: number;
  readonly params: ReadonlyMap<string, string>;
}

/**
 * `decide` remembered per `Accept` value: clients send a handful of distinct
 * ones (Apollo Client names the same list on every query), so each is read
 * once; bounded anyway (64 values), as clients choose them.
 */
export function perAcceptValue<T>(decide: (accept: string) => T): (accept: string) => T {
  const known = new Map<string, T>();
  return (accept) => {
    if (known.has(accept)) return known.get(accept) as T;
    const decided = decide(accept);
    if (known.size >= 64) known.clear();
    known.set(accept, decided);
    return decided;
  };
}

/** A quality value as RFC 9110 writes it (`0`, `0.5`, `1.000`); anything else counts as 1. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** A `q` parameter's value as a number; text that is no quality value counts as 1 (as for `Accept`). */
export function qualityValue(text: string): number {
  return QVALUE.test(text) ? Number(text) : 1;
}

/** `Accept`'s ranges in order (whitespace dropped, lower case), those asking for a charset other than utf-8 left out. */
export function acceptRanges(accept: string): AcceptRange[] {
  const ranges: AcceptRange[] = [];
  for (const entry of accept.replace(/\s/g, '').toLowerCase().split(',')) {
    const [mediaType, ...rest] = entry.split(';');
    const params = new Map<string, string>();
    for (const param of rest) {
      const at = param.indexOf('=');
      if (at > 0 && !params.has(param.slice(0, at))) params.set(param.slice(0, at), param.slice(at + 1).replace(/^"(.*)"$/, '$1'));
    }
    const charset = params.get('charset');
    if ((charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') || !mediaType) continue;
    const q = params.get('q');
    ranges.push({ mediaType, q: q === undefined ? 1 : qualityValue(q), params });
  }
  return ranges;
}

/** How much the client wants `type`: the quality of the most specific range covering it (the first of equals), 0 when none does. */
export function qualityOf(ranges: readonly AcceptRange[], type: string): number {
  let q = 0;
  let specificity = -1;
  for (const range of ranges) {
    if (!covers(range.mediaType, type)) continue;
    const rank = range.mediaType === '*/*' ? 0 : range.mediaType.endsWith('/*') ? 1 : 2;
    if (rank > specificity) {
      specificity = rank;
      q = range.q;
    }
  }
  return q;
}

/** Index of the first acceptable range covering `type` (what breaks a tie of qualities), -1 when none does. */
export function firstAcceptable(ranges: readonly AcceptRange[], type: string): number {
  return ranges.findIndex((range) => range.q > 0 && covers(range.mediaType, type));
}

/** Whether an `Accept` media type (`*` wildcards allowed) covers `type`. */
function covers(asked: string, type: string): boolean {
  const [pre, suf] = asked.split('/');
  const [typePre, typeSuf] = type.split('/');
  return (pre === '*' || pre === typePre) && (suf === '*' || suf === typeSuf);
}
