"""Issue 28: a set written as CK's dispatcher JSON configs (`enumerate --format ck-config -o DIR`) reads back with
`--ck-config DIR` to the same kernels, for every catalog and set; the files follow CK's tree and schema."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ckspace.space import Space
from ckspace.spec import Spec

ROOT = Path(__file__).resolve().parent.parent
NOT_IDENTITY = {"name", "layout"}  # a 3D kernel is one kernel whichever layout token (ndhwgc, nhwgc) its name spells


def identity(cfg) -> tuple:
    return tuple(sorted((k, v) for k, v in cfg.items() if k not in NOT_IDENTITY))


@pytest.mark.parametrize("arch, set_name", [
    ("gfx950", "full"), ("gfx950", "ck-default"), ("gfx950", "ck-profiler"), ("gfx950", "ck-tests"),
    ("gfx950", "ck-full-tests"), ("gfx950", "ck-tiny"), ("gfx950", "tests"), ("gfx950", "tiny"),
    ("gfx1201", "ck-rdna"), ("gfx942", "full"),
])
def test_every_set_reads_back_as_itself(tmp_path, arch, set_name):
    space = Space(arch=arch)
    configs = space.select(set_name)
    docs, left_out = space.ck_config_documents(configs, set_name)
    assert not left_out  # every catalog kernel has CK's pads
    for rel, doc in docs.items():
        variant_dir, set_dir, file = rel.split("/")
        assert set_dir == set_name and file == f"{doc['layout']}_{doc['datatype']}.json"
        assert variant_dir == {"forward": "forward", "forward_depthwise": "forward", "bwd_data": "backward_data",
                               "bwd_weight": "backward_weight"}[doc["variant"]]
        (tmp_path / variant_dir / set_dir).mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(json.dumps(doc))
    back = Space.from_spec(Spec(arch=arch, ck_config=tmp_path)).listed("the configs")
    assert sorted(map(identity, back)) == sorted(map(identity, configs))


def test_the_command_writes_ck_files_and_reads_them_back(tmp_path):
    out = tmp_path / "configs"
    r = subprocess.run([sys.executable, "-m", "ckspace", "enumerate", "--arch", "gfx950", "--set", "tiny", "--format",
                        "ck-config", "-o", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0 and "wrote 22 kernels in 9 CK config files" in r.stderr, r.stderr
    doc = json.loads((out / "forward" / "tiny" / "nhwgc_bf16.json").read_text())
    assert set(doc) == {"variant", "ndim_spatial", "layout", "datatype", "instances"}
    assert {"tile_m", "warp_m", "vector_size_a", "streamk_enabled"} <= set(doc["instances"][0])
    back = subprocess.run([sys.executable, "-m", "ckspace", "enumerate", "--arch", "gfx950", "--ck-config", str(out)],
                          capture_output=True, text=True, cwd=ROOT)
    assert back.returncode == 0 and len(back.stdout.split()) == 22
    bad = subprocess.run([sys.executable, "-m", "ckspace", "enumerate", "--arch", "gfx950", "--set", "tiny",
                          "--format", "ck-config"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "give -o DIR" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def test_kernels_ck_cannot_express_are_left_out_and_named():
    """A GEMM kernel without all three pads (the open space has them: `_pad011`) has no CK JSON entry."""
    space = Space(arch="gfx950")
    kept = [c for c in space.select("tiny") if c["variant"] != "forward_depthwise"][:3]
    unpadded = [{**c, "pad_n": False, "name": c["name"] + "_pad101"} for c in kept]
    docs, left_out = space.ck_config_documents(kept + unpadded, "mixed")
    assert left_out == [c["name"] for c in unpadded]
    assert sum(len(d["instances"]) for d in docs.values()) == len(kept)
