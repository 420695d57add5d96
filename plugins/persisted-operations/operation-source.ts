import type { MaybePromise } from '../../src/index.js';
import type { ResolvedOperation } from '../../src/operations/index.js';

/** Where the plugin finds registered operations: the manifest (manifest mode) or the store, per request. */
export interface OperationSource {
  /** The operation an id or alias names, or undefined when there is none. `client`: see `clientNameOf` (manifest mode ignores it). */
  resolve(client: string, key: string): MaybePromise<ResolvedOperation | undefined>;
  /** Whether a free-form text is a registered operation, as sent or after normalization. */
  isRegistered(client: string, text: string): MaybePromise<boolean>;
  /** Stops polling and closes the store. */
  stop(): Promise<void>;
}
