/**
 * The `switchyard` process's backport of Node's faster AsyncResource#bind
 * (src/cli/async-resource-bind.ts): bound functions behave as Node's do, and
 * the CLI installs it before any command runs.
 */
import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bindModifiesPrototypes, installBindBackport } from '../../src/cli/async-resource-bind.js';
import { runCli } from './run-cli.js';

const nodesBind = AsyncResource.prototype.bind;
let installed: boolean;
let slowBefore: boolean;

beforeAll(() => {
  slowBefore = bindModifiesPrototypes();
  installed = installBindBackport();
});
afterAll(() => {
  AsyncResource.prototype.bind = nodesBind;
});

describe('AsyncResource#bind backport', () => {
  it("replaces Node 20's bind once, and leaves a bind that is already fast alone", () => {
    // Node 20 has the slow bind (its last releases too); newer lines have the fix and need nothing.
    if (process.versions.node.startsWith('20.')) expect(slowBefore).toBe(true);
    expect(installed).toBe(slowBefore);
    expect(bindModifiesPrototypes()).toBe(false);
    expect(installBindBackport()).toBe(false);
  });

  it("runs the function in the resource's async scope with the caller's this and arguments, and keeps its length", () => {
    const storage = new AsyncLocalStorage<string>();
    const resource = storage.run('where it was bound', () => new AsyncResource('TEST'));
    const bound = resource.bind(function add(this: unknown, a: number, b: number) {
      return { store: storage.getStore(), self: this, sum: a + b };
    });
    expect(bound.length).toBe(2);
    const receiver = { bound };
    expect(storage.run('where it is called', () => receiver.bound(1, 2))).toEqual({ store: 'where it was bound', self: receiver, sum: 3 });

    // Node's bind takes a thisArg; @types/node 20 does not declare it.
    const bindWithThis = resource.bind as unknown as (fn: (this: unknown) => unknown, thisArg: unknown) => () => unknown;
    const withThis = bindWithThis.call(
      resource,
      function (this: unknown) {
        return [storage.getStore(), this];
      },
      'given this',
    );
    expect(withThis()).toEqual(['where it was bound', 'given this']);

    const fromStatic = storage.run('static', () => AsyncResource.bind(() => storage.getStore()));
    expect(fromStatic()).toBe('static');
  });

  it('keeps the deprecated asyncResource property, which reads and writes the resource and warns DEP0172 once', async () => {
    const warnings: Array<Error & { code?: string }> = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const resource = new AsyncResource('TEST');
      const bound = resource.bind(() => 1) as (() => number) & { asyncResource: AsyncResource };
      expect(Object.keys(bound)).toContain('asyncResource');
      expect(bound.asyncResource).toBe(resource);
      const other = new AsyncResource('OTHER');
      bound.asyncResource = other;
      expect(bound.asyncResource).toBe(other);
      // The bound function still runs in the resource it was bound to.
      expect(bound()).toBe(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((warning) => warning.code === 'DEP0172')).toHaveLength(1);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it("refuses something that is not a function with Node's own error", () => {
    expect(() => new AsyncResource('TEST').bind(42 as unknown as () => void)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_TYPE' }));
  });

  it('is in place in the switchyard process before any command runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bind-backport-'));
    try {
      // Preloaded into the CLI's process: at exit it says whether bind's accessors have a plain prototype.
      const probe = join(dir, 'probe.cjs');
      writeFileSync(
        probe,
        `const { AsyncResource } = require('node:async_hooks');
process.on('exit', () => {
  const getter = Object.getOwnPropertyDescriptor(new AsyncResource('PROBE').bind(() => {}), 'asyncResource').get;
  process.stderr.write('plain accessor prototype: ' + (Object.getPrototypeOf(getter) === Function.prototype) + '\\n');
});
`,
      );
      const { code, stderr } = await runCli(['--version'], { env: { NODE_OPTIONS: `--require ${probe}` } });
      expect(code).toBe(0);
      expect(stderr).toContain('plain accessor prototype: true');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
