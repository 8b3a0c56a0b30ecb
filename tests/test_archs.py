"""The arch files' facts (constraints/archs/*.toml) against the sources they cite.

The tables below are typed from the sources by hand, not read from the arch files or from a fixture, so that an
edit of an arch file that the sources do not back fails here:

* LLVM, llvm/lib/Target/AMDGPU/AMDGPU.td at 001c38d03e77 (llvm/llvm-project): the feature set of each processor
  (GCNProcessors.td maps gfx90a to FeatureISAVersion9_0_A, gfx942 to 9_4_2, gfx950 to 9_5_0, gfx1100 to 11_0_0,
  gfx1200 and gfx1201 to 12, gfx1250 to 12_50). The wave size: FeatureGFX9, the generation of every gfx9 set,
  implies FeatureWavefrontSize64; FeatureISAVersion12_50 has FeatureWavefrontSize32; GFX11 and GFX12 name none, and
  GCNSubtarget::initializeSubtargetDependencies (GCNSubtarget.cpp) makes wave32 the default from GFX10 on. The LDS a
  workgroup may allocate: FeatureAddressableLocalMemorySize65536 (FeatureISAVersion9_0_Common, 9_4_2, FeatureGFX11,
  FeatureISAVersion12), 163840 (FeatureISAVersion9_5_Common), 327680 (FeatureISAVersion12_50).
* CK, ROCm/rocm-libraries@029d7b0a projects/composablekernel/dispatcher/codegen/arch_specs_generated.py:
  ARCH_FAMILY_MAP and LDS_TOTAL_CAPACITY_BY_ARCH ("mirrors get_lds_size() in include/ck_tile/core/arch/arch.hpp").

Where the registry toolchain is set up, its clang (22.1.8) confirms both: the wave size of the code it emits, and the
LDS limit it enforces ("local memory (N) exceeds limit (L)").
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from ckspace.codegen import toolchain as T
from ckspace.rules.data import load

# arch: (wave size, addressable LDS bytes per workgroup), from LLVM's AMDGPU.td
LLVM = {
    "gfx90a": (64, 65536),
    "gfx942": (64, 65536),
    "gfx950": (64, 163840),
    "gfx1100": (32, 65536),
    "gfx1200": (32, 65536),
    "gfx1201": (32, 65536),
    "gfx1250": (32, 327680),
}
# arch: (ARCH_FAMILY_MAP, LDS_TOTAL_CAPACITY_BY_ARCH), from CK's arch_specs_generated.py
CK = {
    "gfx90a": ("cdna2", 65536),
    "gfx942": ("cdna3", 65536),
    "gfx950": ("cdna4", 163840),
    "gfx1100": ("rdna3", 65536),
    "gfx1200": ("rdna4", 65536),
    "gfx1201": ("rdna4", 65536),
    "gfx1250": ("cdna5", 327680),
}

ARCHS = load().archs


def test_every_arch_file_is_in_the_tables() -> None:
    assert sorted(ARCHS) == sorted(LLVM) == sorted(CK)


@pytest.mark.parametrize("arch", sorted(LLVM))
def test_warp_size_and_lds_are_llvm_and_ck(arch: str) -> None:
    wave, lds = LLVM[arch]
    family, ck_lds = CK[arch]
    facts = ARCHS[arch]
    assert lds == ck_lds, f"{arch}: LLVM and CK disagree; the arch file must say which it follows"
    assert (facts["warp_size"], facts["lds_bytes"]) == (wave, lds)
    assert facts["family"] == family


@pytest.mark.parametrize("arch", sorted(LLVM))
def test_wave_layouts_of_cks_table_fit_a_workgroup(arch: str) -> None:
    """CK's table of wave layouts is curation; the fact arch.workgroup-size (1024 threads) admits every entry."""
    wave, _ = LLVM[arch]
    assert all(wave * m * n * k <= 1024 for m, n, k in ARCHS[arch]["wave_layouts"])


LDS_PROBE = """#include <hip/hip_runtime.h>
__global__ void ckspace_lds_probe(float* p) {
  __shared__ char s[NBYTES];
  s[(threadIdx.x * 97) % NBYTES] = 1;
  __syncthreads();
  p[threadIdx.x] = s[(threadIdx.x * 31) % NBYTES];
}
"""


def _registry_toolchain() -> T.Toolchain:
    root = os.environ.get("CKSPACE_TOOLCHAIN_DIR")
    if root is None and hasattr(os, "geteuid") and os.geteuid() == 0 and not os.environ.get("XDG_CACHE_HOME"):
        root = f"/var/tmp/ckspace-toolchain-v{T.RECIPE}"
    tc = T.registry_toolchain(Path(root) if root else None)
    if tc is None:
        pytest.skip("the registry toolchain is not set up here (tests/test_build.py sets it up)")
    return tc


@pytest.mark.compile
@pytest.mark.parametrize("arch", sorted(LLVM))
def test_the_compiler_agrees(arch: str, tmp_path: Path) -> None:
    tc = _registry_toolchain()
    # one clang 22 for every arch; the toolchain lists the archs CK Tile 2025.11 builds for, which leaves out gfx1250
    cmd = tc.compilers.get(arch) or tc.compilers["gfx1201"]
    wave, lds = LLVM[arch]
    src = tmp_path / "probe.hip"
    src.write_text(LDS_PROBE)

    def compile_with(nbytes: int) -> subprocess.CompletedProcess:
        return subprocess.run([*cmd, f"--offload-arch={arch}", "--cuda-device-only", "-nogpulib", "-S", "-O1",
                               f"-DNBYTES={nbytes}", str(src), "-o", str(tmp_path / f"probe{nbytes}.s")],
                              capture_output=True, text=True, cwd=tmp_path)

    ok = compile_with(lds)
    assert ok.returncode == 0, ok.stderr
    asm = (tmp_path / f"probe{lds}.s").read_text()
    assert bool(re.search(r"\.amdhsa_wavefront_size32\s+1", asm)) == (wave == 32)
    over = compile_with(lds + 1024)
    assert over.returncode != 0 and f"local memory ({lds + 1024}) exceeds limit ({lds})" in over.stderr
