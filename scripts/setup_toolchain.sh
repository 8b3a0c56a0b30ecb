#!/usr/bin/env bash
# Set up the registry-only HIP toolchain that `ckspace build` uses when there is no ROCm (Debian 12, no GPU):
#   PyPI: ziglang==0.17.0 (its clang 22 builds every arch) and amd-aiter==0.1.7.post2.dev18 (CK Tile headers, ~2025-11)
#   apt-get download (unpacked, never installed): the HIP 5.2 headers (libamdhip64-dev), clang's HIP wrapper headers
#         (libclang-common-19-dev), a sysroot of C/C++ headers (libc6-dev, linux-libc-dev, libstdc++-12-dev,
#         libgcc-12-dev); headers only, no program of Debian's is run
# Idempotent and cached: DIR defaults to $CKSPACE_TOOLCHAIN_DIR, else $XDG_CACHE_HOME/ckspace/toolchain-v4.
# The recipe lives in ckspace/codegen/toolchain.py; this script runs it from the checkout, installed or not.
#
# Usage: scripts/setup_toolchain.sh [DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
exec env PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" python3 -m ckspace.codegen.toolchain setup "$@"
