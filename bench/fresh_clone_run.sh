#!/usr/bin/env bash
# A newcomer's first command: seconds from `bash scripts/run` in a fresh clone (no .venv)
# until GET /health answers, and the CPU seconds it took (user + sys of everything it ran:
# on a busy machine the wall time mostly measures the others). Clones this checkout's
# commit REV (default HEAD) into a temp directory, RUNS times (a fresh clone each time),
# stops the service, removes the clone. The uv, pip and npm caches stay warm, as on a machine
# that has installed before.
#   bash bench/fresh_clone_run.sh                 # RUNS=3 PORT=8791 REV=HEAD
#   REV=<older commit> bash bench/fresh_clone_run.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-3}
port=${PORT:-8791}
rev=$(git -C "$repo" rev-parse --short "${REV:-HEAD}")

one_run() {
  local dir=$1 start end pid page
  git clone -q "$repo" "$dir/clone"
  git -C "$dir/clone" checkout -q "$rev"
  start=$(date +%s.%N)
  (cd "$dir/clone" && PORT=$port exec bash scripts/run >"$dir/run.log" 2>&1) &
  pid=$!
  until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "scripts/run stopped:" >&2
      tail "$dir/run.log" >&2
      return 1
    fi
    sleep 0.1
  done
  end=$(date +%s.%N)
  page=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")
  kill "$pid" && wait "$pid" 2>/dev/null || true
  printf '%s: served after %.1f s (GET / %s, load %s), ' "$rev" "$(echo "$end - $start" | bc)" \
    "$page" "$(cut -d' ' -f1 /proc/loadavg)"
  # the CPU of every process it ran and waited for (the second line of `times`: children)
  times >"$dir/times"  # a builtin, not forked: a pipe would run it in a child of its own
  tail -1 "$dir/times" | awk '{
    split($1, u, "m"); split($2, s, "m")
    printf "CPU %.1f s\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }'
}

for _ in $(seq 1 "$runs"); do
  dir=$(mktemp -d)
  (one_run "$dir") || status=$?
  rm -rf "$dir"
  [ "${status:-0}" = 0 ] || exit "$status"
done
