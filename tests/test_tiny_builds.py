"""constraints/evidence/tiny-builds.json is current: the compiler's verdict on every kernel of `tiny`, per arch.

CI compiles a few kernels of tiny (tests/test_build.py); scripts/record_tiny_builds.py compiles all of it on the five
archs of the registry toolchain and keeps the verdicts. These tests fail while that file is stale: the kernels that
`emit --set tiny --over CATALOG --ck-api 2025.11` writes for an arch (what `build` would compile; CATALOG: CK's full
set, on RDNA its rdna set) must be exactly the kernels it holds a verdict for, under the toolchain ckspace sets up
today, and each must have built with its arch's matrix instructions and the LDS the model says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EVIDENCE = REPO / "constraints" / "evidence" / "tiny-builds.json"
# The matrix instructions of each arch's family, from AMD's ISA documents: CDNA's MFMA, RDNA 3/4's WMMA.
MATRIX_PREFIX = {"gfx90a": "v_mfma", "gfx942": "v_mfma", "gfx950": "v_mfma", "gfx1100": "v_wmma", "gfx1201": "v_wmma"}
# What tiny is selected from: CK's full set, and on RDNA, where CK's full set is depthwise kernels alone (which CK Tile
# 2025.11 cannot build), CK's rdna rule set.
OVER = {"gfx90a": "full", "gfx942": "full", "gfx950": "full", "gfx1100": "ck-rdna", "gfx1201": "ck-rdna"}
RERUN = "stale: run python3 scripts/record_tiny_builds.py --archs {arch}"


def _evidence() -> dict:
    return json.loads(EVIDENCE.read_text())


def test_the_evidence_is_of_the_toolchain_ckspace_sets_up():
    from ckspace.codegen.toolchain import AMD_AITER, ZIGLANG

    data = _evidence()
    assert data["ck_api"] == "2025.11"
    assert data["toolchain"] == {"ziglang": ZIGLANG, "amd_aiter": AMD_AITER}, "another toolchain: " + RERUN.format(
        arch="(all)")
    assert sorted(data["archs"]) == sorted(MATRIX_PREFIX)


@pytest.mark.parametrize("arch", sorted(MATRIX_PREFIX))
def test_every_kernel_of_tiny_built_with_matrix_instructions(arch, tmp_path, capsys):
    from ckspace.cli import main

    out = tmp_path / "emitted"
    assert main(["emit", "--arch", arch, "--set", "tiny", "--over", OVER[arch], "--ck-api", "2025.11",
                 "-o", str(out)]) == 0
    capsys.readouterr()
    emitted = json.loads((out / "manifest.json").read_text())["kernels"]
    held = _evidence()["archs"][arch]
    assert held["over"] == OVER[arch]
    assert sorted(held["kernels"]) == sorted(emitted), RERUN.format(arch=arch)
    assert held["compiled"] == len(emitted) > 0
    for name, k in held["kernels"].items():
        matrix = k["matrix_mnemonics"]
        assert matrix and all(m.startswith(MATRIX_PREFIX[arch]) for m in matrix), (name, matrix)
        assert k["entry_points"] >= 1 and k["lds_bytes"] == k["lds_model"], (name, k)
    # what 2025.11 cannot express is named with a reason, and is not among what it emits
    assert all(why for why in held["unexpressible"].values())
    assert not set(held["unexpressible"]) & set(emitted)
