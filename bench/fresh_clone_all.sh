#!/usr/bin/env bash
# The newcomer's hour on a fresh clone of this checkout (bash bench/fresh_clone_all.sh) (issue 26): scripts/run to a served page,
# then scripts/test, and git status after each. Prints the figures; logs in /tmp/fresh_*.log.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
rm -rf /tmp/fresh && git clone -q "$repo" /tmp/fresh && cd /tmp/fresh
echo "rev $(git rev-parse --short HEAD)"
start=$(date +%s.%N)
(PORT=8795 exec bash scripts/run > /tmp/fresh_run.log 2>&1) &
pid=$!
until curl -sf http://127.0.0.1:8795/health >/dev/null; do kill -0 $pid 2>/dev/null || { echo run died; tail /tmp/fresh_run.log; break; }; sleep 0.1; done
end=$(date +%s.%N)
echo "served after $(echo "$end - $start" | bc) s; GET / $(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:8795/)"
kill $pid; wait $pid 2>/dev/null
echo "status after run: [$(git status --short)]"
tstart=$(date +%s)
bash scripts/test > /tmp/fresh_test.log 2>&1
echo "scripts/test rc $? after $(( $(date +%s) - tstart )) s"
tail -3 /tmp/fresh_test.log
echo "status after test: [$(git status --short)]"
