#!/usr/bin/env bash
# On the device machine, from the repo root: unpack the toolchain of .device/pack (once per machine), copy the code
# (so that the tree a later call sends does not change it under a running audit), and start one background
# `verify --audit --names` per arch's plan in .device/pack, each in a session of its own so that it outlives the call.
# Results go to RUNS/v-ARCH (RUNS: default /tmp; verify-results.json: verdicts and attempts, where a later start on
# the same machine resumes) and RUNS/v-ARCH.json (the report, written when the run ends). Then scripts/device/wait.sh.
#
# Rerun it on the same machine to resume (carry .device/pack again: a call that does not carry it removes it there).
# Env: JOBS (compiles per arch, default 3; JOBS_gfx950=9 sets one arch's: the slow archs can take more cores),
#      BUDGET (seconds, default 1300), CTIMEOUT (per compile, default 900), ARCHS (default: every plan in .device/pack).
set -euo pipefail
runs=${RUNS:-/tmp}  # where the audits run and keep their results
pack=.device/pack
tc=$(cat $pack/tcdir)
if [ ! -f "$tc/toolchain.json" ]; then
    python3 scripts/device/tarxz.py x $pack/rest.tar.xz /
    python3 scripts/device/tarxz.py x $pack/zig.tar.xz /
fi
for a in ${ARCHS:-$(cd $pack && ls plan-*.txt | sed 's/^plan-//; s/\.txt$//')}; do
    if [ -f $runs/v-$a.pid ] && kill -0 "$(cat $runs/v-$a.pid)" 2>/dev/null; then
        echo "$a: an audit is still running (pid $(cat $runs/v-$a.pid))"; continue
    fi
    rm -rf $runs/ck-$a && mkdir -p $runs/ck-$a $runs/v-$a
    cp -r ckspace constraints objectives templates pyproject.toml $runs/ck-$a/
    cp $pack/plan-$a.txt $runs/v-$a.plan
    jobs_of_arch="JOBS_$a"
    jobs=${!jobs_of_arch:-${JOBS:-3}}
    # run from the copy: `python3 -m` puts the working directory first on sys.path, and a later call re-copies the
    # tree there (a compile once failed with "can't open file .../rusage.py" in that window)
    (cd $runs/ck-$a && exec setsid env PYTHONPATH=$runs/ck-$a PYTHONUNBUFFERED=1 CKSPACE_TOOLCHAIN_DIR="$tc" \
        XDG_CACHE_HOME=$runs/cache-$a python3 -m ckspace verify --arch $a --audit --names $runs/v-$a.plan \
        --ck-api 2025.11 --toolchain registry -j "$jobs" --unit-size 1 --budget "${BUDGET:-1300}" \
        --compile-timeout "${CTIMEOUT:-900}" --format json -o $runs/v-$a > $runs/v-$a.json 2> $runs/v-$a.err \
        < /dev/null) &
    echo $! > $runs/v-$a.pid
    echo "$a: started (pid $!, $jobs jobs), $(grep -vc '^#' $pack/plan-$a.txt) kernel(s) in its plan"
done
date +%s > $runs/v-started
