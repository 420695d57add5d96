import { describe, expect, it } from 'vitest';
import { checkStoreVersion } from '../../../plugins/response-cache/index.js';

const info = (version: string) => `# Server\r\nredis_version:${version}\r\nredis_git_sha1:00000000\r\nredis_mode:standalone\r\n`;

describe('the shared store version check', () => {
  it.each([['7.0.0'], ['7.0.15'], ['7.2.4'], ['7.4.1'], ['8.0.2'], ['10.1.0']])('accepts Redis %s', (version) => {
    expect(checkStoreVersion(info(version))).toEqual({ ok: true, version });
  });

  it.each([['6.2.14'], ['6.0.0'], ['5.0.7'], ['2.8.24']])('refuses Redis %s, saying what is needed', (version) => {
    expect(checkStoreVersion(info(version))).toEqual({ ok: false, message: `the server runs Redis ${version}; the response cache needs Redis 7.0 or newer` });
  });

  it('refuses a server that reports no version, or one it cannot read', () => {
    expect(checkStoreVersion('# Server\r\nredis_mode:standalone\r\n')).toEqual({
      ok: false,
      message: 'the server did not report redis_version in INFO; Redis 7.0 or newer is required',
    });
    expect(checkStoreVersion(info('unstable'))).toEqual({ ok: false, message: 'cannot read the server version "unstable"; Redis 7.0 or newer is required' });
  });
});
