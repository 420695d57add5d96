/**
 * Node.js's own fix for a cost of `AsyncResource#bind`, backported to the
 * `switchyard` process on Node versions that lack it (nodejs/node#58218,
 * fixed in Node 24 by building the deprecated accessors without
 * `Object.setPrototypeOf`).
 *
 * Why the router cares: every HTTP/2 client request in Node 20 goes through
 * `bind` (`ClientHttp2Session#request` binds its connect callback), so every
 * gRPC call pays it. `bind` adds a deprecated `asyncResource` getter and
 * setter to the bound function, and Node 20 wraps each with
 * `util.deprecate`, which sets the wrapped function as the wrapper's
 * prototype: new hidden classes for every call, made in the old generation.
 * Measured: a bare @grpc/grpc-js client under load spent 250-310 us of CPU
 * per call before, 180-230 us after; in the gRPC router the bytes promoted
 * out of the young generation fell from 8.6 to 6.7 KB per request
 * (docs/grpc.md, "Performance").
 *
 * The bound function behaves as Node's: it runs `fn` in the resource's
 * async scope with the caller's `this` (or `thisArg`), keeps `fn.length`,
 * and its `asyncResource` property still reads and writes the resource and
 * emits the DEP0172 deprecation warning once.
 */
import { AsyncResource } from 'node:async_hooks';

const DEPRECATION = 'The asyncResource property on bound functions is deprecated';

/** Whether this process's `AsyncResource#bind` builds its accessors with a modified prototype (the slow kind). */
export function bindModifiesPrototypes(): boolean {
  const bound = new AsyncResource('SWITCHYARD_BIND_PROBE').bind(function probe() {});
  const getter = Object.getOwnPropertyDescriptor(bound, 'asyncResource')?.get;
  return getter !== undefined && Object.getPrototypeOf(getter) !== Function.prototype;
}

let warned = false;

/** DEP0172, once; as Node's deprecations, `from` is where the stack trace starts, and under --throw-deprecation every use throws. */
function warnDeprecated(from: (...args: never[]) => unknown): void {
  if (warned || process.noDeprecation) return;
  process.emitWarning(DEPRECATION, 'DeprecationWarning', 'DEP0172', from);
  warned = true;
}

type Bind = (this: AsyncResource, fn: (...args: unknown[]) => unknown, thisArg?: unknown) => (...args: unknown[]) => unknown;

/**
 * Replaces `AsyncResource.prototype.bind` with the fixed one when this
 * Node's is the slow kind; returns whether it did. Safe to call again.
 */
export function installBindBackport(): boolean {
  if (!bindModifiesPrototypes()) return false;
  const original = AsyncResource.prototype.bind as unknown as Bind;
  const bind: Bind = function bind(this: AsyncResource, fn, thisArg) {
    // Node's own argument check and error.
    if (typeof fn !== 'function') return original.call(this, fn, thisArg);
    const resource = this;
    let reported: unknown = this;
    function getAsyncResource(): unknown {
      warnDeprecated(getAsyncResource);
      return reported;
    }
    function setAsyncResource(value: unknown): void {
      warnDeprecated(setAsyncResource);
      reported = value;
    }
    const bound =
      thisArg === undefined
        ? function bound(this: unknown, ...args: unknown[]) {
            return resource.runInAsyncScope(fn, this, ...args);
          }
        : resource.runInAsyncScope.bind(resource, fn, thisArg);
    Object.defineProperties(bound, {
      length: { configurable: true, enumerable: false, value: fn.length, writable: false },
      asyncResource: { configurable: true, enumerable: true, get: getAsyncResource, set: setAsyncResource },
    });
    return bound;
  };
  AsyncResource.prototype.bind = bind as unknown as typeof AsyncResource.prototype.bind;
  return true;
}
