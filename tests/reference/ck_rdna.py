"""Independent, procedural re-implementation of CK's ``rdna`` rule set (spec section 12.5).

A test oracle in the style of :mod:`ck_full`: plain Python, no ``ckspace`` import. Read from CK's code:

* ROCm/rocm-libraries ``projects/composablekernel/dispatcher/codegen/grouped_conv/grouped_config_rules_rdna.py``
  @ eaf6d8bcc2bc99a2d59c19874a622e44702814b1 (the rule set),
* ``.../dispatcher/codegen/unified_grouped_conv_codegen.py`` @ eaf6d8bc (``_RULE_SET_MODULES["rdna"]``, the CLI,
  ``generate_all``, ``GroupedConvKernelConfig.name``),
* ``.../dispatcher/codegen/arch_specs_generated.py`` @ 029d7b0a1df04211a0a40027bf073f0bcb3fd6a3 (the arch facts; not
  stored at eaf6d8bc, see tests/fixtures/arch-specs-rdna.json, which holds every fact of that file for the three
  RDNA arches).

What CK does (``get_configs(arch, variants, ndims, datatypes)``):

1. ``get_warp_size(arch) != 32`` (any gfx9 arch) -> ``ValueError``. Any variant other than forward -> ``ValueError``;
   forward missing -> ``ValueError``. An ndim other than 2 or 3 -> ``ValueError``.
2. ``supported_datatypes(arch)``: those of ``WMMA_DATATYPES = ("fp16", "bf16")`` whose
   ``get_warp_tile_combos(arch, f"{dt}_{dt}_fp32")`` contains ``[16, 16, 16]``. None -> ``ValueError`` (gfx1250, whose
   only fp16/bf16 WMMA tile is 16x16x32). A requested dtype outside that list -> ``ValueError`` - so the CLI's default
   ``--datatype fp16 bf16 fp32`` and its default ``--variant forward bwd_data bwd_weight`` both make the CLI print
   ``ERROR: ...`` and exit 1: the catalog needs ``--rule-set rdna --variant forward --datatype fp16 bf16``.
3. Loops ``for dtype in allowed (arch order, filtered by the request): for ndim in sorted(set(ndims)):
   for (wave_m, wave_n, wave_k) in get_warp_configs(arch)`` -> one config each: tile (wave_m*16, wave_n*16, 32), wave as
   listed (warp_k = wave_k, 1 for every RDNA layout), warp tile 16x16x16, compv3 / cshuffle / intrawave, pads on,
   ``vector_sizes=(2, 2, 8)`` (so the name gets ``_vec2_2_8``), no dsb, default specialization, layout ``"ndhwgc"``
   in 3D and ``"nhwgc"`` in 2D, ``datatype`` tag set to the dtype. ``is_valid_for_arch`` is NOT called (it would reject
   every one of them through ``check_wmma_instance``'s ``warp_tile_k < 32`` rule; spec 12.3).
4. ``generate_all`` then runs the CLI ArchFilter per (config, its dtype); all 16 pass on each arch (checked below with
   :func:`ck_checks.arch_filter_reason`), and the CLI fails (exit 1) if the rdna run produced 0 kernels.

The vector choice: CK's comment says (4, 8, 8) "drives the CompV3 buffer-load instruction count to zero for these wave
shapes" and (2, 2, 8) "keeps tile_m*tile_k/(block_size*vector_a) >= 1". The self-test checks both statements (and the
same for tile_n / vector_b) with block_size = 32 * wave_m * wave_n * wave_k.

Result: 2 dtypes x 2 ndims x 4 wave layouts = 16 kernels on each of gfx1100, gfx1200 and gfx1201.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``reference`` importable as a package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "reference"  # noqa: A001

from .ck_checks import arch_filter_reason, is_valid_for_arch_reason
from .ck_common import Config, Tile, Wave, gemm_name, get_warp_size, load_tables, wave_combos, warp_tiles

__all__ = [
    "RDNA_ARCH_SPECS",
    "WMMA_DATATYPES",
    "WMMA_WARP_TILE",
    "TILE_K",
    "VECTOR_SIZES",
    "supported_datatypes",
    "get_configs",
    "configs",
    "names",
]

#: Fixture with the arch facts of arch_specs_generated.py (rocm-libraries @ 029d7b0a) for gfx1100/gfx1200/gfx1201.
ARCH_SPECS_RDNA_PATH = Path(__file__).resolve().parent.parent / "fixtures" / "arch-specs-rdna.json"

# ----------------------------------------------------------------------------------------------------------------
# The arch facts the rule set uses (rocm-libraries arch_specs_generated.py @ 029d7b0a; identical at 4b0885bd)
# ----------------------------------------------------------------------------------------------------------------

_RDNA_WAVES: tuple[Wave, ...] = ((2, 4, 1), (1, 8, 1), (8, 1, 1), (4, 2, 1))  # WARP_SUPPORTED_COMBINATIONS, in order

#: arch -> the facts used here. warp_size from get_warp_size (arch_specs.json says 32 too); warp_tiles: only the
#: fp16/bf16/fp32 keys (no fp32 entry = no fp32 WMMA tile); lds_bytes: LDS_TOTAL_CAPACITY_BY_ARCH (64 KiB).
RDNA_ARCH_SPECS: dict[str, dict[str, Any]] = {
    arch: {
        "family": family,
        "warp_size": 32,
        "lds_bytes": 65536,
        "waves": _RDNA_WAVES,
        "warp_tiles": {"fp16_fp16_fp32": ((16, 16, 16),), "bf16_bf16_fp32": ((16, 16, 16),)},
    }
    for arch, family in (("gfx1100", "rdna3"), ("gfx1200", "rdna4"), ("gfx1201", "rdna4"))
}

# ----------------------------------------------------------------------------------------------------------------
# The rule set's constants (grouped_config_rules_rdna.py)
# ----------------------------------------------------------------------------------------------------------------

WMMA_DATATYPES: tuple[str, ...] = ("fp16", "bf16")
WMMA_WARP_TILE: Tile = (16, 16, 16)
TILE_K = 32
VECTOR_SIZES: tuple[int, int, int] = (2, 2, 8)


def _arch_waves(arch: str) -> tuple[Wave, ...]:
    """get_warp_configs(arch): the recorded RDNA facts, else the CK tables (empty for an unknown arch)."""
    if arch in RDNA_ARCH_SPECS:
        return RDNA_ARCH_SPECS[arch]["waves"]
    return wave_combos(arch) or ()


def _arch_warp_tiles(arch: str, dtype: str) -> tuple[Tile, ...]:
    """get_warp_tile_combos(arch, f"{dtype}_{dtype}_fp32")."""
    if arch in RDNA_ARCH_SPECS:
        return RDNA_ARCH_SPECS[arch]["warp_tiles"].get(f"{dtype}_{dtype}_fp32", ())
    return warp_tiles(arch, dtype)


def supported_datatypes(arch: str) -> list[str]:
    """Datatypes the rule set can generate for ``arch`` (empty: unsupported)."""
    if get_warp_size(arch) != 32:
        return []
    return [dt for dt in WMMA_DATATYPES if WMMA_WARP_TILE in _arch_warp_tiles(arch, dt)]


def get_configs(
    arch: str,
    variants: tuple[str, ...] = ("forward",),
    ndims: tuple[int, ...] = (2, 3),
    datatypes: tuple[str, ...] = WMMA_DATATYPES,
) -> list[Config]:
    """``grouped_config_rules_rdna.get_configs``, with its ValueErrors, in CK's order (each config named)."""
    if get_warp_size(arch) != 32:
        raise ValueError(f"rdna rule set requires a wave32 architecture, got {arch!r}")
    if any(v != "forward" for v in variants):
        raise ValueError(f"rdna rule set supports only forward, got {list(variants)}")
    if "forward" not in variants:
        raise ValueError("rdna rule set requires the forward variant")
    if any(n not in (2, 3) for n in ndims):
        raise ValueError(f"rdna rule set supports ndim 2 and 3, got {list(ndims)}")
    allowed = supported_datatypes(arch)
    if not allowed:
        raise ValueError(f"rdna rule set does not support architecture {arch!r}")
    if any(d not in allowed for d in datatypes):
        raise ValueError(f"rdna rule set for {arch} supports {allowed}, got {list(datatypes)}")

    wtm, wtn, wtk = WMMA_WARP_TILE
    out: list[Config] = []
    for dtype in [d for d in allowed if d in datatypes]:
        for ndim in sorted(set(ndims)):
            for wave_m, wave_n, wave_k in _arch_waves(arch):
                cfg: Config = {
                    "kind": "gemm", "variant": "forward", "ndim": ndim, "dtype": dtype,
                    "layout": "ndhwgc" if ndim == 3 else "nhwgc",
                    "pipeline": "compv3", "epilogue": "cshuffle", "scheduler": "intrawave",
                    "tile_m": wave_m * wtm, "tile_n": wave_n * wtn, "tile_k": TILE_K,
                    "wave_m": wave_m, "wave_n": wave_n, "wave_k": wave_k,
                    "warp_tile_m": wtm, "warp_tile_n": wtn, "warp_tile_k": wtk,
                    "vec_a": VECTOR_SIZES[0], "vec_b": VECTOR_SIZES[1], "vec_c": VECTOR_SIZES[2],
                    "num_wave_groups": 1, "num_groups_to_merge": 1, "double_smem_buffer": False,
                    "two_stage": False, "specialization": "default", "explicit_gemm": False,
                    "streamk": "none", "streamk_persistent": False, "split_image": False,
                    "pad_m": True, "pad_n": True, "pad_k": True,
                }  # fmt: skip
                cfg["name"] = gemm_name(cfg)
                out.append(cfg)
    return out


def configs(arch: str) -> list[Config]:
    """The catalog CK writes for ``--rule-set rdna --variant forward --ndim 2 3 --datatype <supported>``: every dtype
    the arch supports, ndim 2 and 3, filtered by the CLI ArchFilter as ``generate_all`` does. Empty where CK raises
    (wave64 arches, arches without a 16x16x16 fp16/bf16 WMMA tile such as gfx1250, unknown arches)."""
    allowed = supported_datatypes(arch)
    if not allowed:
        return []
    return [c for c in get_configs(arch, ("forward",), (2, 3), tuple(allowed)) if arch_filter_reason(c, arch) is None]


def names(arch: str) -> list[str]:
    """Sorted kernel names of the rdna catalog on ``arch``."""
    result = sorted(c["name"] for c in configs(arch))
    assert len(result) == len(set(result)), "duplicate names"
    return result


# ----------------------------------------------------------------------------------------------------------------
# self-test
# ----------------------------------------------------------------------------------------------------------------

RDNA_ARCHES = ("gfx1100", "gfx1200", "gfx1201")


def _check_recorded_facts() -> None:
    """The facts above == the fixture (rocm-libraries) == the CK tables of the spec (ck-tables.json)."""
    with ARCH_SPECS_RDNA_PATH.open(encoding="utf-8") as fh:
        fixture = json.load(fh)["archs"]
    tables = load_tables()["arch_specs"]
    for arch, facts in RDNA_ARCH_SPECS.items():
        fx = fixture[arch]
        assert fx["ARCH_FAMILY_MAP"] == facts["family"] == tables["ARCH_FAMILY_MAP"][arch]
        assert fx["get_warp_size"] == fx["arch_specs_json"]["warp_size"] == facts["warp_size"] == get_warp_size(arch)
        assert fx["LDS_TOTAL_CAPACITY_BY_ARCH"] == facts["lds_bytes"] == fx["arch_specs_json"]["lds_capacity_kb"] * 1024
        assert tables["arch_specs_json_warp_size_lds_kb"][arch] == {"warp_size": 32, "lds_capacity_kb": 64}
        assert [tuple(w) for w in fx["WARP_SUPPORTED_COMBINATIONS"]] == list(facts["waves"]) == list(wave_combos(arch))
        for key in ("fp16_fp16_fp32", "bf16_bf16_fp32", "fp32_fp32_fp32"):
            recorded = facts["warp_tiles"].get(key, ())
            assert tuple(tuple(t) for t in fx["WARP_TILE_SUPPORTED_COMBINATIONS"].get(key, [])) == recorded
            assert tables["WARP_TILE_SUPPORTED_COMBINATIONS"][arch].get(key, []) == [list(t) for t in recorded]


def _self_test() -> None:
    _check_recorded_facts()
    for arch in RDNA_ARCHES:
        cs = get_configs(arch)
        assert len(cs) == 16 and len(names(arch)) == 16, (arch, len(cs), len(names(arch)))
        assert [c["name"] for c in cs] == [c["name"] for c in configs(arch)]  # the ArchFilter keeps all 16
        assert supported_datatypes(arch) == ["fp16", "bf16"]
        for c in cs:
            block = 32 * c["wave_m"] * c["wave_n"] * c["wave_k"]
            a_loads = (c["tile_m"] * c["tile_k"]) // (block * c["vec_a"])
            b_loads = (c["tile_n"] * c["tile_k"]) // (block * c["vec_b"])
            assert a_loads >= 1 and b_loads >= 1, c["name"]
            assert c["name"].endswith("_16x16x16_vec2_2_8"), c["name"]
            assert f"_{'ndhwgc' if c['ndim'] == 3 else 'nhwgc'}_{c['ndim']}d_compv3_cshuffle_intrawave_" in c["name"]
            # spec 12.3: CK's is_valid_for_arch (not called by rdna) would reject every one of them
            assert is_valid_for_arch_reason(c, arch) == "wmma_instance"
        # ... and CK's comment: the dataclass default vectors (4, 8, 8) would give some wave shape zero loads
        assert any(
            (c["tile_m"] * TILE_K) // (32 * c["wave_m"] * c["wave_n"] * 4) < 1
            or (c["tile_n"] * TILE_K) // (32 * c["wave_m"] * c["wave_n"] * 8) < 1
            for c in cs
        )
    assert names("gfx1100") == names("gfx1200") == names("gfx1201")  # names carry no arch
    # CK refuses these (ValueError); the catalog helpers return nothing.
    for arch in ("gfx90a", "gfx942", "gfx950", "gfx1250"):
        assert names(arch) == []
        try:
            get_configs(arch)
        except ValueError:
            pass
        else:  # pragma: no cover
            raise AssertionError(f"{arch}: CK raises ValueError")
    # The CLI defaults (all three variants, dtypes fp16 bf16 fp32) are refused too.
    for kwargs in ({"variants": ("forward", "bwd_data", "bwd_weight")}, {"datatypes": ("fp16", "bf16", "fp32")}):
        try:
            get_configs("gfx1201", **kwargs)  # type: ignore[arg-type]
        except ValueError:
            pass
        else:  # pragma: no cover
            raise AssertionError(kwargs)


def main() -> None:
    for arch in RDNA_ARCHES + ("gfx1250", "gfx950"):
        ns = names(arch)
        print(f"{arch}: rdna {len(ns)} kernels (dtypes {supported_datatypes(arch) or 'none: CK raises ValueError'})")
    for n in names("gfx1201"):
        print("   ", n)
    _self_test()
    print("self-test OK")


if __name__ == "__main__":
    main()
