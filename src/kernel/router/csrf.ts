/**
 * CSRF prevention (`csrf_prevention.*`): a browser sends some POSTs to
 * another site without asking it first (no CORS preflight) — those whose
 * `Content-Type` is `application/x-www-form-urlencoded`, `multipart/form-data`
 * or `text/plain`, or that have none. A page on any site could make a
 * logged-in user's browser send such a request, with the user's cookies, and
 * run a mutation. The router refuses them before reading the body, unless
 * they carry a non-empty header from `required_headers`: a browser only sends
 * a custom header after a preflight the CORS policy allowed.
 *
 * GET is left alone: operations over GET are queries (mutations over GET are
 * refused with 405 anyway).
 */
import type { CsrfPreventionConfig } from '../config/core-schema.js';

/** Media types (essence, lower case) a browser may send cross-site without a preflight. */
const SIMPLE_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

/** The JSON body of the refusal. */
export interface CsrfRefusal {
  readonly status: 400;
  readonly body: string;
}

/** Decides per request; built once from the config. */
export class CsrfGuard {
  private readonly headers: readonly string[];
  private readonly refusal: CsrfRefusal;

  constructor(config: CsrfPreventionConfig) {
    this.headers = config.enabled ? config.required_headers.map((name) => name.trim().toLowerCase()) : [];
    const names = this.headers.join(', ');
    this.refusal = {
      status: 400,
      body: JSON.stringify({
        errors: [
          {
            message: `This request could have been sent by a page on another site (cross-site request forgery) and was refused. Send it with Content-Type: application/json, or with a non-empty header from: ${names}.`,
            extensions: { code: 'CSRF_PREVENTED' },
          },
        ],
      }),
    };
  }

  /**
   * The refusal for a request that must not run, else undefined. `header`
   * reads a request header by lower-case name (undefined when absent).
   */
  check(method: string, header: (name: string) => string | undefined): CsrfRefusal | undefined {
    if (this.headers.length === 0 || method !== 'POST') return undefined;
    if (!isSimpleContentType(header('content-type'))) return undefined;
    for (const name of this.headers) {
      const value = header(name);
      if (value !== undefined && value.trim() !== '') return undefined;
    }
    return this.refusal;
  }
}

/**
 * Whether a browser could have sent this `Content-Type` without a preflight:
 * none, empty, or one of the three simple types (parameters, case and a
 * second listed type ignored, so any reading that finds a simple type counts).
 */
export function isSimpleContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return true;
  const value = contentType.trim();
  if (value === '') return true;
  for (const part of value.split(',')) {
    if (SIMPLE_TYPES.has(part.split(';')[0]!.trim().toLowerCase())) return true;
  }
  return false;
}
