#!/usr/bin/env python3
"""Import CK's reference tables (spec/ck-tables.json) into ckspace's readable TOML data under constraints/.

Maintenance only: run it when CK's tables change, review the diff, and commit. ckspace itself reads only the TOML.
The arch files (constraints/archs/*.toml) are not written: they carry a source per value and are kept by hand; the
script reports where CK's tables differ from them.
Usage: scripts/import_ck_tables.py PATH/TO/ck-tables.json [OUT_DIR=constraints]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ARCHS = ["gfx90a", "gfx942", "gfx950", "gfx1201", "gfx1250"]
DTYPE_KEYS = {"fp16": "fp16_fp16_fp32", "bf16": "bf16_bf16_fp32", "fp32": "fp32_fp32_fp32"}


def tile_str(t: list[int]) -> str:
    return "x".join(str(v) for v in t)


def toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(v)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print("wrote", path)


def arch_files(d: dict, out: Path) -> None:
    """The arch files are kept by hand, each value with its sources (CK's arch_specs_generated.py, LLVM's AMDGPU.td,
    the compiler): report where CK's tables in the JSON differ from them, write nothing."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib

    specs = d["arch_specs"]
    for arch in ARCHS:
        path = out / "archs" / f"{arch}.toml"
        if not path.exists():
            print(f"{arch}: no arch file {path}")
            continue
        facts = tomllib.loads(path.read_text())
        waves = specs["WARP_SUPPORTED_COMBINATIONS"][arch]
        if facts["wave_layouts"] != waves:
            print(f"{arch}: wave_layouts {facts['wave_layouts']} in the arch file, {waves} in CK's table")
        combos = specs["WARP_TILE_SUPPORTED_COMBINATIONS"][arch]
        for dt, key in DTYPE_KEYS.items():
            if facts["warp_tiles"].get(dt, []) != combos.get(key, []):
                print(f"{arch}: warp_tiles.{dt} {facts['warp_tiles'].get(dt, [])} in the arch file, "
                      f"{combos.get(key, [])} in CK's table")


def per_tile_table(header: str, mapping: dict[str, object]) -> list[str]:
    lines = [f"[{header}]"]
    for tile, value in mapping.items():
        lines.append(f'"{tile}" = {toml_value(value)}')
    return lines + [""]


def curation_files(d: dict, out: Path) -> None:
    full = d["full_rule_set"]
    ck = out / "tables" / "ck"
    # tiles
    lines = ["# CK's curated block tiles per variant, ndim and dtype (spec 3.2, full_rule_set.tiles).", ""]
    for variant, per in full["tiles"].items():
        lines.append(f"[tiles.{variant}]")
        for key in sorted(per, key=lambda k: (k.split("|")[0], ["fp16", "bf16", "fp32"].index(k.split("|")[1]))):
            ndim, dt = key.split("|")
            lines.append(f'"{ndim}.{dt}" = {toml_value([tile_str(t) for t in per[key]])}')
        lines.append("")
    write(ck / "tiles.toml", "\n".join(lines))
    # waves
    lines = ["# Block -> wave split strategies (spec 3.3).", "", "[strategies]"]
    for name, v in full["wave_strategy_counts"].items():
        lines.append(f"{name} = {toml_value(v)}")
    lines.append("")
    lines += per_tile_table("base", full["base_tile_wave_strategies"])
    for variant, m in full["wave_strategy_overrides"].items():
        lines.append("# the per-variant override replaces the base list for that tile")
        lines += per_tile_table(f"override.{variant}", m)
    write(ck / "waves.toml", "\n".join(lines))
    # warp tiles
    lines = [
        "# Warp-tile (MFMA) MxN choice per (variant, tile, wave) (spec 3.4).",
        "# default: per-wave tile pm = tile_m/wave_m, pn = tile_n/wave_n; 32x32 if both are >= 32 and multiples",
        "# of 32, else 16x16. The exceptions below replace the default candidate list.",
        f"excluded_mn = {toml_value(full['excluded_warp_mn_shapes_(curated_path_only)'])}",
        "",
    ]
    for e in full["warp_mn_exceptions"]:
        lines += [
            "[[exception]]",
            f'variant = "{e["variant"]}"',
            f'tile = "{tile_str(e["tile"])}"',
            f"wave = {toml_value(e['wave'])}",
            f"warp_mn = {toml_value(e['warp_mn'])}",
            "",
        ]
    write(ck / "warp_tiles.toml", "\n".join(lines))
    # vectors
    lines = ["# Vector-width strategies (spec 3.6): VecStrategy values per dtype class, then per-tile tables.", ""]
    lines.append("[strategies]")
    for name, v in full["vec_strategy_values"].items():
        lines.append(f"{name} = {{ half = {toml_value(v['half'])}, float = {toml_value(v['float'])} }}")
    lines.append("")
    for variant, table in full["vec_strategy_tables"].items():
        lines.append(f"[table.{variant}]")
        for tile, by_class in table.items():
            inner = ", ".join(f"{c} = {toml_value(s)}" for c, s in by_class.items())
            lines.append(f'"{tile}" = {{ {inner} }}')
        lines.append("")
    for variant, table in full["extra_vec_triples"].items():
        lines.append(f"[extra.{variant}]")
        for tile, by_class in table.items():
            inner = ", ".join(f"{c} = {toml_value(s)}" for c, s in by_class.items())
            lines.append(f'"{tile}" = {{ {inner} }}')
        lines.append("")
    write(ck / "vectors.toml", "\n".join(lines))
    # pipelines
    lines = ["# (pipeline, scheduler) pairs per tile (spec 3.7); dtype-class overrides win when present.", ""]
    for variant, table in full["tile_pipelines"].items():
        lines.append(f"[curated.{variant}]")
        for tile, pairs in table.items():
            lines.append(f'"{tile}" = {toml_value([f"{p}/{s}" for p, s in pairs])}')
        lines.append("")
    for variant, table in full["tile_pipelines_dclass_overrides"].items():
        lines.append(f"[override.{variant}]")
        for tile, by_class in table.items():
            inner = ", ".join(
                f"{c} = {toml_value([f'{p}/{s}' for p, s in pairs])}" for c, pairs in by_class.items()
            )
            lines.append(f'"{tile}" = {{ {inner} }}')
        lines.append("")
    write(ck / "pipelines.toml", "\n".join(lines))
    # features
    lines = ["# Feature configs per variant (spec 3.9, VARIANT_FEATURES), in CK's list order.", ""]
    for variant, feats in full["variant_features"].items():
        for f in feats:
            lines.append(f"[[feature.{variant}]]")
            sk = f.get("streamk")
            lines.append(f"num_groups_to_merge = {f['num_groups_to_merge']}")
            lines.append(f"split_image = {toml_value(f['split_image'])}")
            lines.append(f"two_stage = {toml_value(f['two_stage'])}")
            lines.append(f"explicit_gemm = {toml_value(f['explicit_gemm'])}")
            if sk:
                lines.append(f'streamk = "{str(sk.get("strategy", "TREE")).lower()}"')
                lines.append(f"streamk_persistent = {toml_value(bool(sk.get('persistent', False)))}")
            lines.append(f"tiles = {toml_value([tile_str(t) for t in f['tile_override']])}")
            if f.get("pipeline_override"):
                lines.append(f"pipelines = {toml_value([f'{p}/{s}' for p, s in f['pipeline_override']])}")
            if f.get("dtype_classes"):
                lines.append(f"dtype_classes = {toml_value(f['dtype_classes'])}")
            lines.append("")
    write(ck / "features.toml", "\n".join(lines))
    # depthwise
    lines = [
        "# CK's 20 depthwise parameter sets (spec 3.10), emitted for every dtype, 2D only.",
        "columns = [\"dw_tile_h\", \"dw_tile_w\", \"filter_size\", \"stride_h\", \"stride_w\", \"sub_h\", \"sub_w\", "
        "\"nbatch\", \"in_vec\", \"out_vec\"]",
        "rows = [",
    ]
    for row in full["depthwise_params_(tile_h,tile_w,filt,str_h,str_w,sub_h,sub_w,nbatch,in_vec,out_vec)"]:
        lines.append(f"  {toml_value(row)},")
    lines.append("]")
    write(ck / "depthwise.toml", "\n".join(lines) + "\n")


def main() -> None:
    src = Path(sys.argv[1])
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("constraints")
    d = json.loads(src.read_text())
    arch_files(d, out)
    curation_files(d, out)


if __name__ == "__main__":
    main()
