/** Error codes of the `profiling` plugin, declared with the plugin (docs/errors.md lists them). */
import type { ErrorCatalogue } from '../../src/index.js';

export const profilingErrors = {
  PROFILING_BAD_PARAMETER: {
    status: 400,
    description: '`seconds` is not a whole number from 1 to 300, `debug` is above what the path offers, or `seconds` was sent to a path that answers at once.',
    solution: 'Send `seconds=1`..`300` to `profile` or `block` only; `debug=1` (or `2` on `goroutine`).',
  },
  PROFILING_NOT_FOUND: { status: 404, description: 'No profile at that path.', solution: 'See `GET /debug/pprof/` for the list.' },
  PROFILING_METHOD_NOT_ALLOWED: { status: 405, description: 'A method other than `GET`.', solution: 'Use `GET`.' },
  PROFILING_CAPTURE_BUSY: {
    status: 409,
    description: 'A CPU (or block) capture is already running in this process.',
    solution: 'Wait for it to finish, then ask again.',
  },
  PROFILING_CAPTURE_FAILED: {
    status: 500,
    description: 'The profiler failed while taking the profile; the log line `Profile capture failed` has the reason.',
    solution: 'Report it with the log line.',
  },
  PROFILING_UNAVAILABLE: {
    status: 503,
    statusText: '503 / startup',
    description: "`@datadog/pprof`'s native profiler cannot load on this platform, or another library in the process (such as `dd-trace` with profiling) already drives it.",
    solution: 'Use a platform with prebuilt binaries (Linux and macOS on x64 or arm64, Windows on x64), or turn the other profiler off.',
  },
  PROFILE_PUSH_FAILED: {
    statusText: 'log only',
    description: 'A push to `profiler.server_address` failed (the `reason` and `status` fields say why), was rejected, or the waiting queue overflowed. Serving is not affected.',
    solution: 'Check that the profile server runs at that address and that `basic_auth` holds a token with profile-write permission.',
  },
} satisfies ErrorCatalogue;

declare module 'switchyard' {
  interface ErrorCodes extends Record<keyof typeof profilingErrors, true> {}
}
