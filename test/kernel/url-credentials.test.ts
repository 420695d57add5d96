import { describe, expect, it } from 'vitest';
import { stripUrlCredentials } from '../../src/index.js';
import { splitUrlCredentials as split } from '../../src/kernel/url-credentials.js';

describe('stripUrlCredentials', () => {
  it('drops user and password and keeps the rest of the URL as written', () => {
    expect(stripUrlCredentials('http://user:s3cret@collector:4318/v1/traces?x=1#f')).toBe('http://collector:4318/v1/traces?x=1#f');
    expect(stripUrlCredentials('ftp://user:pw@x/')).toBe('ftp://x/');
    expect(stripUrlCredentials('https://token@HOST')).toBe('https://HOST');
  });

  it('reads the userinfo up to its last @, as URL parsers do', () => {
    expect(stripUrlCredentials('http://u:p@ss@host/a@b')).toBe('http://host/a@b');
    expect(new URL(stripUrlCredentials('http://u:p@ss@host/a@b')).host).toBe('host');
  });

  it('leaves URLs without credentials and text that is not a URL alone', () => {
    for (const text of ['http://host:1/graphql', 'http://host/path?email=a@b', 'user@host', '/a/file.graphql', 'dns:///host:50051']) {
      expect(stripUrlCredentials(text)).toBe(text);
    }
  });
});

describe('splitUrlCredentials', () => {
  it('turns userinfo into HTTP Basic authorization, decoding percent-escapes', () => {
    expect(split('http://deploy:pa%24s@host:1/sg.graphql')).toEqual({ url: 'http://host:1/sg.graphql', authorization: `Basic ${Buffer.from('deploy:pa$s').toString('base64')}` });
    expect(split('http://host:1/sg.graphql')).toEqual({ url: 'http://host:1/sg.graphql', authorization: undefined });
  });
});
