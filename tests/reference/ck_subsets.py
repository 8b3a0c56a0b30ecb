"""CK's ``full-tests`` (spec section 5) and ``tiny`` (spec section 6) subsets of ``full``."""

from __future__ import annotations

from .ck_common import Config


def category(cfg: Config) -> str:
    """The stratification category of section 5, first matching rule wins.

    Variant and ndim are NOT part of it (so "regular" mixes forward, bwd_data and bwd_weight); gm+two_stage
    counts as merged_groups. Every config of ``full`` carries a dtype tag (fp16 would be used without one).
    """
    dt = cfg.get("dtype") or "fp16"
    if cfg["kind"] == "depthwise":
        return f"depthwise:{dt}"
    if cfg["streamk"] != "none":
        return f"streamk:{dt}"
    if cfg["split_image"]:
        return f"split_image:{dt}"
    if cfg["num_groups_to_merge"] > 1:
        return f"merged_groups:{dt}"
    if cfg["two_stage"]:
        return f"two_stage:{dt}"
    if cfg["explicit_gemm"]:
        return f"explicit_gemm:{dt}"
    return f"regular:{dt}"


def full_tests(configs: list[Config]) -> list[Config]:
    """Every fifth config per category (ranks 4, 9, 14, ...), the first one of categories with fewer than five,
    plus a coverage fix-up: per (variant, dtype) of the GEMM configs, every (pipeline, scheduler) pair present in
    ``configs`` gets its first config in list order. Output in the original order. Deterministic, no seed."""
    selected: set[int] = set()
    members: dict[str, list[int]] = {}
    for idx, cfg in enumerate(configs):
        members.setdefault(category(cfg), []).append(idx)
    for idxs in members.values():
        if len(idxs) < 5:
            selected.add(idxs[0])
        else:
            selected.update(i for rank, i in enumerate(idxs) if (rank + 1) % 5 == 0)

    def pair_key(cfg: Config) -> tuple[str, str, str, str]:
        return (cfg["variant"], cfg["dtype"], cfg["pipeline"], cfg["scheduler"])

    covered = {pair_key(configs[i]) for i in selected if configs[i]["kind"] == "gemm"}
    for idx, cfg in enumerate(configs):
        if cfg["kind"] != "gemm":
            continue
        key = pair_key(cfg)
        if key not in covered:  # first config in list order with a missing pair
            covered.add(key)
            selected.add(idx)
    return [configs[i] for i in sorted(selected)]


def tiny(configs_full_tests: list[Config]) -> list[Config]:
    """First config of each (category, ndim) group, groups in order of first appearance; round-robin fill
    (2nd of each group, then 3rd, ...) up to 10 if there are fewer than 10 groups (never needed in practice)."""
    groups: dict[tuple[str, int], list[Config]] = {}
    for cfg in configs_full_tests:
        groups.setdefault((category(cfg), cfg["ndim"]), []).append(cfg)
    result = [members[0] for members in groups.values()]
    depth = 1
    while len(result) < 10 and any(len(m) > depth for m in groups.values()):
        for members in groups.values():
            if len(result) >= 10:
                break
            if len(members) > depth:
                result.append(members[depth])
        depth += 1
    return result
