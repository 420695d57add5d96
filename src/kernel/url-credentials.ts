/**
 * Credentials written into a URL (`http://user:password@host/`): kept out of
 * logs and error messages, and sent the way a user who writes them means
 * (HTTP Basic authorization) instead of in the URL, which fetch refuses.
 */

// The authority runs to the first `/`, `?` or `#` (or `\`, which WHATWG URLs
// read as `/`); the userinfo ends at its last `@`, as URL parsers read it.
const USERINFO = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/?#\\]*@/;

/**
 * The URL as written, without its userinfo (`user:password@`), for logs and
 * messages. Text that is not a URL with an authority comes back unchanged.
 */
export function stripUrlCredentials(url: string): string {
  return url.replace(USERINFO, '$1');
}

/** A URL split into the address to request and the `Authorization` value its userinfo means. */
export interface UrlWithoutCredentials {
  /** The URL without userinfo. */
  readonly url: string;
  /** `Basic <base64(user:password)>` when the URL had userinfo; else undefined. */
  readonly authorization: string | undefined;
}

/**
 * Moves a URL's userinfo to an HTTP Basic `Authorization` value (what curl
 * does with `http://user:pw@host/`); percent-escapes in it are decoded first.
 */
export function splitUrlCredentials(url: string): UrlWithoutCredentials {
  if (!URL.canParse(url)) return { url, authorization: undefined };
  const parsed = new URL(url);
  if (parsed.username === '' && parsed.password === '') return { url, authorization: undefined };
  const userinfo = `${safeDecode(parsed.username)}:${safeDecode(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.toString(), authorization: `Basic ${Buffer.from(userinfo, 'utf8').toString('base64')}` };
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
