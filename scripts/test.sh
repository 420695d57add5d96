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

mkdir -p test/artifacts
# CLI tests start the fresh build rather than the sources through tsx: seconds less per start.
export SWITCHYARD_TEST_CLI=dist/cli/main.js
npx vitest run --reporter=default --reporter=json --outputFile.json=test/artifacts/vitest.json
status=$?
node scripts/test-summary.mjs test/artifacts/vitest.json || status=1
exit $status
