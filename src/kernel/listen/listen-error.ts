/**
 * The error a side listener stops startup with when its address is bad or
 * cannot be bound: a configuration problem, naming the plugin and the key
 * to fix, on one line a user reads in the log or on the terminal.
 */
import { ConfigError } from '../config/config-error.js';

/** Who asked for the listener, and what to tell the user about it. */
export interface ListenErrorSubject {
  /** Plugin that owns the listener (`connect`); the kernel's own listeners give none. */
  readonly plugin?: string;
  /** Listener name (`connect`, `metrics`). */
  readonly name: string;
  /** Config key the address came from (`connect_rpc.server.listen_addr`). Default: none. */
  readonly configKey?: string;
  /** What the listener serves, after "for" (`the Connect endpoints`). Default: `the <name> listener`. */
  readonly purpose?: string;
}

/**
 * `[connect] cannot listen on 127.0.0.1:5026 for the Connect endpoints
 * (connect_rpc.server.listen_addr): listen EADDRINUSE: ...`. A `ConfigError`
 * (code `CONFIG_INVALID`) whose one issue is at the config key; `code` of the
 * cause (`EADDRINUSE`, `EACCES`, `EADDRNOTAVAIL`, `ENOTFOUND`) stays on `cause`.
 */
export class ListenError extends ConfigError {
  override readonly plugin: string | undefined;
  /** The address that could not be used, as given. */
  readonly address: string;

  constructor(subject: ListenErrorSubject, address: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super([{ path: subject.configKey ?? '', plugin: subject.plugin, message: `cannot listen on ${address}: ${reason}` }], { cause });
    this.name = 'ListenError';
    this.plugin = subject.plugin;
    this.address = address;
    const prefix = subject.plugin === undefined ? '' : `[${subject.plugin}] `;
    const key = subject.configKey === undefined ? '' : ` (${subject.configKey})`;
    // One line, not ConfigError's list: there is one problem and it is not in a file.
    this.message = `${prefix}cannot listen on ${address} for ${subject.purpose ?? `the ${subject.name} listener`}${key}: ${reason}`;
  }
}
