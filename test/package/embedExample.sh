#!/usr/bin/env bash
# examples/embed against the packed package: a copy of the example installs the tarball (argument
# 1, or a fresh `npm pack`), type-checks, and runs on the PostgreSQL of $DATABASE_URL (a fresh
# database): its own route and talkgraph's API answer on its server, and its own code reports
# what talkgraph's services hold.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
: "${DATABASE_URL:?the example runs on PostgreSQL: set DATABASE_URL to a fresh database}"
work="$(mktemp -d "${TMPDIR:-/tmp}/talkgraph-embed-XXXXXX")"
app=""
cleanup() {
  if [ -n "$app" ] && kill -0 "$app" 2>/dev/null; then
    kill -TERM "$app"
    wait "$app" || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

tarball="${1:-}"
if [ -z "$tarball" ]; then
  tarball="$work/$(cd "$root" && npm pack --silent --pack-destination "$work" | tail -n 1)"
fi
tarball="$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")"

echo "-- examples/embed with ${tarball}"
cp -r "$root/examples/embed" "$work/embed"
rm -rf "$work/embed/node_modules" "$work/embed/dist"
cd "$work/embed"
npm pkg set "dependencies.talkgraph=file:${tarball}"
# onnxruntime-node's install would fetch CUDA libraries this machine cannot reach (see packInstallServe.sh).
npm_config_onnxruntime_node_install=skip npm install --no-audit --no-fund
if [ -d node_modules/talkgraph/node_modules/effect ]; then
  echo "talkgraph got an effect of its own beside the application's: the versions disagree" >&2
  exit 1
fi

echo "-- tsc --noEmit"
npm run --silent check

port="$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close() })')"
echo "-- run (port ${port})"
: >"$work/app.log"
npx tsc
PORT="$port" TALKGRAPH_DATA_DIR="$work/data" TALKGRAPH_SECRET_KEY="$(node -e 'console.log(require("node:crypto").randomBytes(32).toString("hex"))')" \
  node dist/main.js >"$work/app.log" 2>&1 &
app=$!
deadline=$((SECONDS + 120))
until grep -q "campaign(s); dialer" "$work/app.log" && curl -sf "http://127.0.0.1:${port}/hello" >/dev/null; do
  if ! kill -0 "$app" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
    echo "the embedding example did not come up:" >&2
    cat "$work/app.log" >&2
    exit 1
  fi
  sleep 0.2
done
grep "campaign(s); dialer" "$work/app.log"
echo "-- GET /hello: $(curl -sf "http://127.0.0.1:${port}/hello")"
echo "-- GET /api/v1/health: $(curl -sf "http://127.0.0.1:${port}/api/v1/health")"
status="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${port}/api/v2/agents")"
if [ "$status" != 401 ]; then
  echo "talkgraph's API under the application's router answered ${status} without credentials, not 401" >&2
  exit 1
fi
echo "-- the embedding example runs on the packed package"
