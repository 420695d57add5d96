/** The ConfigError a config step fails with, for tests that read its issues. */
import { ConfigError } from '../../../src/kernel/config/index.js';

/** The ConfigError `action` throws; another error is thrown on, and none fails the test. */
export function configErrorOf(action: () => unknown): ConfigError {
  try {
    action();
  } catch (error) {
    return asConfigError(error);
  }
  throw new Error('expected a ConfigError');
}

/** The ConfigError `action` rejects with; another error is thrown on, and none fails the test. */
export async function configRejectionOf(action: () => Promise<unknown>): Promise<ConfigError> {
  try {
    await action();
  } catch (error) {
    return asConfigError(error);
  }
  throw new Error('expected a ConfigError');
}

function asConfigError(error: unknown): ConfigError {
  if (error instanceof ConfigError) return error;
  throw error;
}
