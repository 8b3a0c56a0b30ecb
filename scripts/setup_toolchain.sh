#!/usr/bin/env bash
# Set up the registry-only HIP toolchain that `ckspace build` uses when there is no ROCm (Debian 12, no GPU):
#   apt:  clang-19 (gfx942); the HIP 5.2 headers of libamdhip64-dev and clang-offload-bundler of clang-tools-19
#         (downloaded and unpacked, not installed)
#   PyPI: ziglang==0.17.0 (its clang 22 builds gfx950) and amd-aiter==0.1.7.post2.dev18 (CK Tile headers, ~2025-11)
# Idempotent and cached: DIR defaults to $CKSPACE_TOOLCHAIN_DIR, else $XDG_CACHE_HOME/ckspace/toolchain-v2.
# Installing clang-19 needs root (or install it first: apt-get install clang-19). The recipe lives in
# ckspace/toolchain.py; this script runs it from the checkout, installed or not.
#
# Usage: scripts/setup_toolchain.sh [DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
exec env PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" python3 -m ckspace.toolchain setup "$@"
