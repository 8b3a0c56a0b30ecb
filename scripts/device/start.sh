#!/usr/bin/env bash
# On the device machine, from the repo root: unpack the toolchain of .device/pack (once per machine), copy the code
# (so that the tree a later call sends does not change it under a running audit), and start one background
# `verify --audit --names` per arch's plan in .device/pack, each in a session of its own so that it outlives the call.
# Results go to /tmp/v-ARCH (verify-results.json: verdicts and attempts; a later start on the same machine resumes
# there) and /tmp/v-ARCH.json (the report, written when the run ends). Then scripts/device/wait.sh.
#
# Rerun it on the same machine to resume (the plans stay in /tmp/v-ARCH.plan; carry .device/pack again or it is gone).
# Env: JOBS (compiles per arch, default 3), BUDGET (seconds, default 1300), CTIMEOUT (per compile, default 900),
#      ARCHS (default: every plan in .device/pack), RESULTS (a folder of verify-results-ARCH.json to resume from).
set -euo pipefail
pack=.device/pack
tc=$(cat $pack/tcdir)
if [ ! -f "$tc/toolchain.json" ]; then
    tar xJf $pack/rest.tar.xz -C /
    tar xJf $pack/zig.tar.xz -C /
fi
for a in ${ARCHS:-$(cd $pack && ls plan-*.txt | sed 's/^plan-//; s/\.txt$//')}; do
    if [ -f /tmp/v-$a.pid ] && kill -0 "$(cat /tmp/v-$a.pid)" 2>/dev/null; then
        echo "$a: an audit is still running (pid $(cat /tmp/v-$a.pid))"; continue
    fi
    rm -rf /tmp/ck-$a && mkdir -p /tmp/ck-$a /tmp/v-$a
    cp -r ckspace constraints objectives templates pyproject.toml /tmp/ck-$a/
    if [ -n "${RESULTS:-}" ] && [ -f "$RESULTS/verify-results-$a.json" ] && [ ! -f /tmp/v-$a/verify-results.json ]; then
        cp "$RESULTS/verify-results-$a.json" /tmp/v-$a/verify-results.json
    fi
    cp $pack/plan-$a.txt /tmp/v-$a.plan
    # run from the copy: `python3 -m` puts the working directory first on sys.path, and a later call re-copies the
    # tree there (one compile of session 21 failed with "can't open file .../rusage.py" in that window)
    (cd /tmp/ck-$a && exec setsid env PYTHONPATH=/tmp/ck-$a PYTHONUNBUFFERED=1 CKSPACE_TOOLCHAIN_DIR="$tc" \
        XDG_CACHE_HOME=/tmp/cache-$a python3 -m ckspace verify --arch $a --audit --names /tmp/v-$a.plan \
        --ck-api 2025.11 --toolchain registry -j "${JOBS:-3}" --unit-size 1 --budget "${BUDGET:-1300}" \
        --compile-timeout "${CTIMEOUT:-900}" --format json -o /tmp/v-$a > /tmp/v-$a.json 2> /tmp/v-$a.err \
        < /dev/null) &
    echo $! > /tmp/v-$a.pid
    echo "$a: started (pid $!), $(grep -vc '^#' $pack/plan-$a.txt) kernel(s) in its plan"
done
date +%s > /tmp/v-started
