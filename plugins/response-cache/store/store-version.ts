/** Oldest shared-store server accepted: the cache relies on Redis 7.0 commands (`PEXPIREAT ... NX|GT`). */
export const MIN_STORE_VERSION = { major: 7, minor: 0 } as const;

/** Outcome of checking a server's `INFO server` text. */
export type VersionCheck = { readonly ok: true; readonly version: string } | { readonly ok: false; readonly message: string };

/** Checks the `redis_version` an `INFO server` reply reports against `MIN_STORE_VERSION`. */
export function checkStoreVersion(info: string): VersionCheck {
  const version = /^redis_version:(\S+)\s*$/m.exec(info)?.[1];
  const required = `${MIN_STORE_VERSION.major}.${MIN_STORE_VERSION.minor}`;
  if (version === undefined) {
    return { ok: false, message: `the server did not report redis_version in INFO; Redis ${required} or newer is required` };
  }
  const match = /^(\d+)\.(\d+)/.exec(version);
  if (!match) return { ok: false, message: `cannot read the server version "${version}"; Redis ${required} or newer is required` };
  const major = Number(match[1]);
  const minor = Number(match[2]);
  if (major > MIN_STORE_VERSION.major || (major === MIN_STORE_VERSION.major && minor >= MIN_STORE_VERSION.minor)) return { ok: true, version };
  return { ok: false, message: `the server runs Redis ${version}; the response cache needs Redis ${required} or newer` };
}
