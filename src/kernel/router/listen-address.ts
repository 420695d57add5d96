import { RouterError } from '../errors.js';

/**
 * Splits `host:port` (also `[::1]:port` and `:port`). A bare `:port`
 * binds loopback: nothing listens beyond the machine unless asked to.
 */
export function parseListenAddress(address: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(address.trim());
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) {
    throw new RouterError('CONFIG_INVALID', `invalid listen address "${address}": expected host:port`);
  }
  const host = match[1] ?? (match[2] || '127.0.0.1');
  return { host, port };
}

/**
 * A listen address as Go (Cosmo Router) reads it, in Switchyard's terms: Go
 * binds every interface for a bare `:port`, which Switchyard binds to
 * loopback, so it becomes `0.0.0.0:port` (IPv4). Other addresses as they are.
 */
export function goListenAddress(address: string): string {
  return /^\s*:\d+\s*$/.test(address) ? `0.0.0.0${address.trim()}` : address;
}

/** Whether a host only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/**
 * Side listeners speak plain HTTP: warn at startup when one is reachable
 * from other machines, so it is not left open without TLS in front.
 */
export function warnIfExposed(log: { warn(fields: object, message: string): void }, listener: string, host: string): void {
  if (isLoopbackHost(host)) return;
  log.warn({ listener, host }, `${listener} listens beyond loopback over plain HTTP; put TLS or a firewall in front of it`);
}
