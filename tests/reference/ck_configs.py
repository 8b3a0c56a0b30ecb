"""An independent reading of CK's dispatcher JSON configs (ROCm/composable_kernel@78d657c4,
dispatcher/codegen/configs/grouped_conv/), for the tests: each entry's kernel name as CK's
``GroupedConvKernelConfig.name(datatype)`` and ``DepthwiseConvKernelConfig.name(datatype)`` write it (seed 001).

Written from the seed and the JSON files, not from scripts/import_ck_configs.py or ckspace. The loader's defaults
for an absent key: double_smem_buffer false, num_groups_to_merge 1, num_wave_groups 1, specialization "default",
two_stage false, explicit_gemm false, split_image false, streamk_enabled false, streamk_persistent false; pads are
always on. The files carry no compv2/basic_v2 bwd_weight entry (which CK's loader would skip); the reader says so.
"""

from __future__ import annotations

import json
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "ck-configs" / "78d657c4"
SHORT_VARIANT = {"forward": "fwd", "fwd": "fwd", "bwd_data": "bwd_data", "bwd_weight": "bwd_weight"}


def gemm_name(head: dict, e: dict) -> str:
    name = (f"grouped_conv_{SHORT_VARIANT[head['variant']]}_{head['datatype']}_{head['layout'].lower()}_"
            f"{head['ndim_spatial']}d_{e['pipeline']}_{e['epilogue']}_{e['scheduler']}_"
            f"{e['tile_m']}x{e['tile_n']}x{e['tile_k']}_{e['warp_m']}x{e['warp_n']}x{e['warp_k']}_"
            f"{e['warp_tile_m']}x{e['warp_tile_n']}x{e['warp_tile_k']}")
    vec = (e["vector_size_a"], e["vector_size_b"], e["vector_size_c"])
    if vec != (4, 8, 8):
        name += "_vec%d_%d_%d" % vec
    if e.get("num_wave_groups", 1) != 1:
        name += f"_wg{e['num_wave_groups']}"
    if e.get("num_groups_to_merge", 1) != 1:
        name += f"_gm{e['num_groups_to_merge']}"
    if e.get("double_smem_buffer", False):
        name += "_dsb"
    if e.get("two_stage", False):
        name += "_2stage"
    if e.get("specialization", "default") != "default":
        name += "_" + e["specialization"]
    if e.get("explicit_gemm", False):
        name += "_explicit_gemm"
    if e.get("streamk_enabled", False):
        name += "_streamk_" + (e.get("streamk_reduction_strategy") or "tree").lower()
        if e.get("streamk_persistent", False):
            name += "_persistent"
    if e.get("split_image", False):
        name += "_large_tensor"
    return name


def depthwise_name(head: dict, e: dict) -> str:
    return (f"grouped_conv_fwd_depthwise_{head['datatype']}_{head['layout']}_{head['ndim_spatial']}d_"
            f"{e['tile_h']}x{e['tile_w']}_f{e['filt']}_s{e['str_h']}x{e['str_w']}_p{e['pad_h']}x{e['pad_w']}_"
            f"nb{e['nbatch']}_sub{e['sub_h']}x{e['sub_w']}_vec{e['in_vec']}_{e['out_vec']}")


def names(path: Path) -> list[str]:
    """The kernel names of one JSON file, in file order."""
    doc = json.loads(path.read_text())
    out = []
    for e in doc["instances"]:
        if doc["variant"] == "forward_depthwise":
            out.append(depthwise_name(doc, e))
        else:
            assert not (doc["variant"] == "bwd_weight" and e["pipeline"] in ("compv2", "basic_v2")), path
            out.append(gemm_name(doc, e))
    return out


def files(set_name: str | None = None) -> list[Path]:
    """The 42 files (or those of one set: profiler, tests), in a fixed order."""
    return sorted(p for p in FIXTURES.glob("*/*/*.json") if set_name is None or p.parent.name == set_name)
