#!/usr/bin/env bash
# The package as a user gets it: `npm pack`, `npm install <tarball>` into an empty directory (no
# sources, no devDependencies), then `npx talkgraph serve` on a free port and a fresh data dir must
# answer GET /api/v1/health. Leaves the tarball's path in $TALKGRAPH_TARBALL_OUT when set (the
# embedding example installs the same tarball).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/talkgraph-pack-XXXXXX")"
server=""
cleanup() {
  if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
    kill -TERM "$server"
    wait "$server" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "-- npm pack"
tarball="$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)"
if tar -tzf "$work/$tarball" | grep -E '^package/(test|bench|app|http|layers|services|src)/' >/dev/null; then
  echo "the package carries sources or tests:" >&2
  tar -tzf "$work/$tarball" | grep -E '^package/(test|bench|app|http|layers|services|src)/' | head >&2
  exit 1
fi

echo "-- npm install ${tarball} (into an empty directory)"
mkdir "$work/user"
cd "$work/user"
# onnxruntime-node's install fetches CUDA libraries from api.nuget.org on Linux x64, which this
# machine cannot reach and talkgraph (CPU inference) does not use: skipped, as the repo's .npmrc does.
npm_config_onnxruntime_node_install=skip npm install --no-audit --no-fund --omit=dev "$work/$tarball"

port="$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')"
echo "-- npx talkgraph serve (port ${port})"
TALKGRAPH_DATA_DIR="$work/data" PORT="$port" LOG_LEVEL=warning npx talkgraph serve >"$work/serve.log" 2>&1 &
server=$!
deadline=$((SECONDS + 120))
until curl -sf "http://127.0.0.1:${port}/api/v1/health" >/dev/null; do
  if ! kill -0 "$server" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
    echo "talkgraph from the package did not serve:" >&2
    cat "$work/serve.log" >&2
    exit 1
  fi
  sleep 0.2
done
echo "-- /api/v1/health: $(curl -sf "http://127.0.0.1:${port}/api/v1/health")"
# npm passes the signal on and exits by it (status 143); the server behind it must be gone too.
kill -TERM "$server"
wait "$server" || true
server=""
for _ in $(seq 1 50); do
  curl -s "http://127.0.0.1:${port}/api/v1/health" >/dev/null || break
  sleep 0.2
done
if curl -s "http://127.0.0.1:${port}/api/v1/health" >/dev/null; then
  echo "talkgraph still serves after npx was stopped:" >&2
  cat "$work/serve.log" >&2
  exit 1
fi
if [ -n "${TALKGRAPH_TARBALL_OUT:-}" ]; then cp "$work/$tarball" "$TALKGRAPH_TARBALL_OUT"; fi
echo "-- the packed package installs and serves"
