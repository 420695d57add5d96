/**
 * Sorts the entries of a fetched JWKS document before they are used. Keys
 * that can never verify a token here (encryption keys, other curves or
 * algorithms) are left out quietly. Signing keys that are broken (a missing
 * or malformed parameter, private parameters, RSA under 2048 bits, an entry
 * that is not an object) are left out and reported: a token naming such a
 * key gets the 401 of an unknown key, never a 500, and one bad entry never
 * costs the other keys of the set.
 */
import { importJWK, type JWK } from 'jose';
import { JWT_ALGORITHMS } from './config.js';

/** An entry left out of the set, as logged: never any key material. */
export interface SkippedKey {
  /** The entry's `kid`, or its position in `keys` (`#2`) when it has none. */
  readonly key: string;
  /** Why it cannot be used. */
  readonly reason: string;
}

/** What a JWKS document offers for verifying tokens. */
export interface UsableKeys {
  /** The entries that import as public signing keys, as published. */
  readonly keys: JWK[];
  /** Broken signing keys, to warn about. */
  readonly skipped: SkippedKey[];
}

/** Members only a private key has (RFC 7518 6.2.2, 6.3.2; RFC 8037 2). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth'];
/** Members each key type needs for a public key. */
const REQUIRED_MEMBERS: Record<string, readonly string[]> = { RSA: ['n', 'e'], EC: ['crv', 'x', 'y'], OKP: ['crv', 'x'] };
/** The algorithm a curve signs with (jose matches curve and algorithm the same way). */
const CURVE_ALGORITHMS: Record<string, string> = { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512', Ed25519: 'EdDSA' };
/** jose refuses shorter RSA keys when verifying (RFC 7518 3.3). */
const MIN_RSA_BITS = 2048;

/** The usable keys of a JWKS document; throws when the document has no `keys` array. */
export async function usableKeys(document: unknown): Promise<UsableKeys> {
  const entries = isObject(document) ? document.keys : undefined;
  if (!Array.isArray(entries)) throw new Error('not a JWKS document (no "keys" array)');
  const keys: JWK[] = [];
  const skipped: SkippedKey[] = [];
  for (const [index, entry] of entries.entries()) {
    const verdict = await judgeKey(entry);
    if (verdict === 'usable') keys.push(entry as JWK);
    else if (verdict !== 'not-for-signing') {
      const kid = isObject(entry) && typeof entry.kid === 'string' ? entry.kid : `#${index}`;
      skipped.push({ key: kid, reason: verdict.reason });
    }
  }
  return { keys, skipped };
}

type Verdict = 'usable' | 'not-for-signing' | { readonly reason: string };

async function judgeKey(entry: unknown): Promise<Verdict> {
  if (!isObject(entry)) return { reason: 'not a JSON object' };
  const { kty, use, key_ops: keyOps, alg, ext } = entry;
  // What jose would never pick for a signature check: leave it out without a word.
  if (use !== undefined && use !== 'sig') return 'not-for-signing';
  if (keyOps !== undefined && !(Array.isArray(keyOps) && keyOps.includes('verify'))) return 'not-for-signing';
  if (alg !== undefined && !(JWT_ALGORITHMS as readonly unknown[]).includes(alg)) return 'not-for-signing';
  if (ext !== undefined && typeof ext !== 'boolean') return { reason: '"ext" is not a boolean' };
  if (entry.kid !== undefined && typeof entry.kid !== 'string') return { reason: '"kid" is not a string' };
  if (typeof kty !== 'string') return { reason: 'no "kty"' };
  const required = REQUIRED_MEMBERS[kty];
  if (!required) return 'not-for-signing';
  const secrets = PRIVATE_MEMBERS.filter((member) => entry[member] !== undefined);
  if (secrets.length > 0) return { reason: `it holds private key members (${secrets.join(', ')}); a JWKS publishes public keys only` };
  const missing = required.filter((member) => typeof entry[member] !== 'string');
  if (missing.length > 0) return { reason: `${kty} key without ${missing.map((member) => `"${member}"`).join(', ')} (as a base64url string)` };
  let algorithm = typeof alg === 'string' ? alg : 'RS256';
  if (kty !== 'RSA') {
    const curveAlgorithm = CURVE_ALGORITHMS[entry.crv as string];
    if (!curveAlgorithm || (kty === 'OKP') !== (curveAlgorithm === 'EdDSA')) return 'not-for-signing';
    if (typeof alg === 'string' && alg !== curveAlgorithm) return { reason: `"alg" ${alg} does not fit curve ${String(entry.crv)}` };
    algorithm = curveAlgorithm;
  } else if (!algorithm.startsWith('RS') && !algorithm.startsWith('PS')) {
    return { reason: `"alg" ${algorithm} does not fit an RSA key` };
  }
  let key: Awaited<ReturnType<typeof importJWK>>;
  try {
    key = await importJWK(entry as JWK, algorithm);
  } catch {
    // The crypto error says little more and may quote parameters: keep to a fixed reason.
    return { reason: `its parameters are not a valid ${kty} public key` };
  }
  const bits = 'algorithm' in key ? (key.algorithm as { modulusLength?: number }).modulusLength : undefined;
  if (bits !== undefined && bits < MIN_RSA_BITS) return { reason: `RSA key of ${bits} bits (at least ${MIN_RSA_BITS})` };
  return 'usable';
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
