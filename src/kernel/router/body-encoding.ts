/**
 * Whether a POST body to `/graphql` arrives in a form the router reads: not
 * compressed (the router decodes no `Content-Encoding`; a proxy in front may)
 * and UTF-8 (the only charset GraphQL over HTTP requires; others get 415, as
 * it says). The post lane (graphql-post-lane.ts) takes only requests that
 * plainly pass; the general handler (graphql-http.ts) asks here.
 */

/**
 * The 415 message for a body sent compressed or in a charset other than
 * UTF-8; undefined when the body can be read. `contentType` is the first
 * entry of the header, as the handler reads it.
 */
export function unreadableBodyReason(contentType: string, contentEncoding: string | undefined): string | undefined {
  const coding = contentEncoding === undefined ? undefined : codingOtherThanIdentity(contentEncoding);
  if (coding !== undefined) {
    return `Content-Encoding${quoted(coding)} is not supported: the router does not decode request bodies. Send the body uncompressed (no Content-Encoding, or identity).`;
  }
  const charset = charsetOf(contentType);
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return `The Content-Type charset${quoted(charset)} is not supported: send the body as UTF-8 (charset=utf-8, or no charset).`;
  }
  return undefined;
}

/** The first coding of a `Content-Encoding` list (lower case) other than `identity`; undefined when there is none. */
function codingOtherThanIdentity(header: string): string | undefined {
  for (const entry of header.split(',')) {
    const coding = entry.trim().toLowerCase();
    if (coding !== '' && coding !== 'identity') return coding;
  }
  return undefined;
}

/** The `charset` parameter of a media type, lower case and unquoted; undefined when it has none. */
function charsetOf(contentType: string): string | undefined {
  const params = contentType.split(';');
  for (let i = 1; i < params.length; i++) {
    const at = params[i]!.indexOf('=');
    if (at < 0 || params[i]!.slice(0, at).trim().toLowerCase() !== 'charset') continue;
    return params[i]!.slice(at + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
  }
  return undefined;
}

/** An HTTP token, as a message names it (` "gzip"`); nothing for anything else, so no error repeats arbitrary client text. */
function quoted(value: string): string {
  return /^[!#$%&'*+.^_`|~0-9a-z-]{1,40}$/.test(value) ? ` "${value}"` : '';
}
