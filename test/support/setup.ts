/**
 * Runs before every test file (vitest.config.ts `setupFiles`). Compiled code
 * (response shapers, entity collectors, gRPC object readers) is checked
 * against the general code on everything the suite runs in-process: a
 * difference fails the test.
 */
import { decoderChecks } from '../../plugins/grpc/compiled-object.js';
import { compiledChecks } from '../../src/kernel/compiled-code.js';

compiledChecks.enabled = true;
decoderChecks.enabled = true;
