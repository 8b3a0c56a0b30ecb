#!/usr/bin/env bash
# Pack what an audit run on the device machine needs and it lacks (it starts bare, with no network): the registry
# toolchain, xz'd (zig ~40 MB, the rest ~4 MB; a few minutes), and the rests of an audit round's plans from the
# audit data file.
# Everything goes to .device/pack (ignored by git: scripts/device/pack.sh adds it to .git/info/exclude); carry that
# folder in the device call, then run scripts/device/start.sh there (it travels with the tree).
#
# Usage, from the repo root: scripts/device/pack.sh [DATA [ROUND]]   (default scripts/data/audit-2026-11-27.json 6)
# Env: CKSPACE_TOOLCHAIN_DIR (the registry toolchain, set up by scripts/setup_toolchain.sh), ARCHS; REPACK=1 packs the
# toolchain again (else it is packed once per toolchain path).
set -euo pipefail
data=${1:-scripts/data/audit-2026-11-27.json}
round=${2:-6}
archs=${ARCHS:-"gfx90a gfx942 gfx950 gfx1100 gfx1201"}
tc=$(python3 -c 'import sys; sys.path.insert(0, "."); from ckspace.codegen.toolchain import default_dir; print(default_dir())')
[ -f "$tc/toolchain.json" ] || { echo "pack.sh: no registry toolchain in $tc (run scripts/setup_toolchain.sh)" >&2; exit 2; }
tc=$(cd "$tc" && pwd -P)
if [ -d .git/info ]; then grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >> .git/info/exclude; fi
mkdir -p .device/pack
rel=${tc#/}
# the toolchain's wrappers and toolchain.json hold its absolute path: it unpacks to the same path there
if [ -n "${REPACK:-}" ] || [ ! -s .device/pack/zig.tar.xz ] || [ "$(cat .device/pack/tcdir 2>/dev/null)" != "$tc" ]; then
    python3 scripts/device/tarxz.py c .device/pack/zig.tar.xz / "$rel/zig"
    python3 scripts/device/tarxz.py c .device/pack/rest.tar.xz / "$rel/bin" "$rel/ck" "$rel/hip" "$rel/sysroot" \
        "$rel/zres" "$rel/toolchain.json"
    echo "$tc" > .device/pack/tcdir
fi
for a in $archs; do
    python3 scripts/audit_round_rest.py "$data" "$round" "$a" --holes-last -o ".device/pack/plan-$a.txt"
done
du -sh .device/pack
