#!/usr/bin/env bash
# On the device machine: wait until every audit that start.sh began has ended, or WAIT seconds (default 540) have
# passed, and print each arch's verdicts so far (RUNS: start.sh's, default /tmp). Copies every arch's
# verify-results.json, report and log to $OUT/results.tgz each time (what a call's $OUT brings back), and prints DONE
# once every audit has ended.
set -uo pipefail
runs=${RUNS:-/tmp}
deadline=$(( $(date +%s) + ${WAIT:-540} ))
running() { for p in $runs/v-*.pid; do [ -f "$p" ] && kill -0 "$(cat "$p")" 2>/dev/null && return 0; done; return 1; }
while running && [ "$(date +%s)" -lt "$deadline" ]; do sleep 10; done
for r in $runs/v-*/verify-results.json; do
    [ -f "$r" ] || continue  # no round has ended yet
    a=$(basename "$(dirname "$r")"); a=${a#v-}
    python3 - "$r" "$a" <<'PY'
import collections, json, sys
data = json.load(open(sys.argv[1]))
results = data.get("kernels", {})
counts = collections.Counter(v.get("status", "?") for v in results.values() if isinstance(v, dict))
print(f"{sys.argv[2]}: {sum(counts.values())} verdict(s) {dict(counts)}, {len(data.get('attempts', {}))} attempt(s)")
PY
done
mkdir -p "${OUT:-/tmp/out}"
files=$(cd "$runs" && ls -d v-*.json v-*.err v-*/verify-results.json 2>/dev/null)
[ -n "$files" ] && tar czf "${OUT:-/tmp/out}/results.tgz" -C "$runs" $files
if running; then echo "RUNNING (since $(( $(date +%s) - $(cat $runs/v-started) )) s)"; else echo DONE; fi
