#!/usr/bin/env python3
"""Write (or check) tests/golden/2026.06 by running CK's own generator, the seed, on the golden configs.

The seed ../shared/seeds/001_*.txt is CK's `dispatcher/codegen/unified_grouped_conv_codegen.py` (CK commit
7c2b979de2, June 2026), stored without its Python indentation (and without blank lines; runs of spaces collapsed).
This script restores it as a runnable module and runs it; no CK code is kept in this repository:

1. The seed text is read from `--seeds DIR` (default ../shared/seeds next to the repository).
2. scripts/seed_indent.json, ckspace's own data, gives the indentation depth of every seed line (run-length
   encoded). It is applied, then verified: the re-indented lines, stripped, equal the seed's lines, stripped; no
   line inside a triple-quoted string gets any indentation (the C++ text of CK's f-strings stays exactly as the seed
   stores it); and the result compiles.
3. The module is executed with minimal stand-ins for the modules it imports that are not in the seed (see
   STAND_INS below), then CK's `UnifiedGroupedConvCodegen.generate_all` is run on the configs of
   tests/golden/2026.06/kernels.json in a temporary directory: CKTileGroupedConvKernelGenerator (incl. its two-stage
   and stream-K paths), CKTileDepthwiseConvKernelGenerator, GroupedConvDispatcherWrapperGenerator, and the
   include_all and registration headers, exactly as CK writes them.
4. `--write` copies CK's kernel headers, wrappers, include_all headers and registration header into
   tests/golden/2026.06; `--check` compares them byte for byte (exit 1 on any difference).

    python3 scripts/golden_from_seed.py --check            # exit 1 on any difference, 2 on bad input
    python3 scripts/golden_from_seed.py --write
    python3 scripts/golden_from_seed.py --print-source     # the re-indented seed, for reading
    python3 scripts/golden_from_seed.py --compare-emitter [--all] [--arch gfx950]
        # beyond the golden files: CK's generator and ckspace's 2026.06 templates on one kernel of every
        # template-relevant kind of the arch's whole space (or on all of it), compared token by token

The seed lost the C++ indentation inside its f-strings too (its text is whitespace-collapsed), so CK's output as
regenerated here differs from CK's real output in whitespace only; ckspace's templates are compared with these
files whitespace aside (tests/test_emit.py).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import io
import json
import logging
import sys
import tempfile
import tokenize
import types
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden" / "2026.06"
INDENT_MAP = Path(__file__).resolve().parent / "seed_indent.json"
DEFAULT_SEEDS = REPO.parent / "shared" / "seeds"
SEED_MODULE = "ck_seed_unified_grouped_conv_codegen"
DTYPES = ("fp16", "bf16", "fp32")


class SeedError(Exception):
    """Bad input (no seed, another seed text, a map that does not fit): one line, exit 2."""


# ---- 1. the seed text ----------------------------------------------------------------------------------------------
def seed_lines(seeds: Path, imap: dict) -> list[str]:
    """The seed's Python source lines, from `first_line` to the end of the file."""
    if not seeds.is_dir():
        raise SeedError(f"no seed directory {seeds} (pass --seeds DIR)")
    for path in sorted(seeds.glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        if imap["seed_path"] in text[:400]:
            lines = text.split("\n")
            try:
                start = lines.index(imap["first_line"])
            except ValueError:
                raise SeedError(f"{path.name}: no line {imap['first_line']!r}") from None
            return lines[start:]
    raise SeedError(f"no seed holding {imap['seed_path']} under {seeds}")


# ---- 2. the indentation map ----------------------------------------------------------------------------------------
def load_indent_map(path: Path = INDENT_MAP) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def depths(imap: dict) -> list[int]:
    out: list[int] = []
    for token in " ".join(imap["runs"]).split():
        depth, count = token.split("*")
        out.extend([int(depth)] * int(count))
    if len(out) != imap["lines"]:
        raise SeedError(f"indentation map: runs cover {len(out)} lines, header says {imap['lines']}")
    return out


def reindent(lines: list[str], imap: dict) -> str:
    """The seed with the map's indentation; verified (see verify_reindented)."""
    depth = depths(imap)
    if len(lines) != len(depth):
        raise SeedError(f"seed has {len(lines)} source lines, the indentation map {len(depth)}")
    digest = hashlib.sha256("\n".join(s.strip() for s in lines).encode()).hexdigest()
    if digest != imap["stripped_sha256"]:
        raise SeedError("the seed text is not the one scripts/seed_indent.json was made for (stripped_sha256)")
    unit = " " * imap["indent_unit"]
    text = "\n".join(unit * d + s.strip() if s.strip() else "" for d, s in zip(depth, lines)) + "\n"
    verify_reindented(text, lines, depth)
    return text


def _string_spans(text: str) -> Iterator[tuple[int, int]]:
    """(first row, last row) of every string literal; f-strings are several tokens from Python 3.12 on (PEP 701)."""
    fstring_start, fstring_end = getattr(tokenize, "FSTRING_START", None), getattr(tokenize, "FSTRING_END", None)
    open_fstrings: list[int] = []
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING:
            yield tok.start[0], tok.end[0]
        elif tok.type == fstring_start:
            open_fstrings.append(tok.start[0])
        elif tok.type == fstring_end:
            yield open_fstrings.pop(), tok.end[0]


def verify_reindented(text: str, lines: list[str], depth: list[int]) -> None:
    """Indentation is all we add: same lines once stripped, nothing added inside strings, and it compiles."""
    out = text.split("\n")[:-1]
    if len(out) != len(lines):
        raise SeedError(f"re-indented text has {len(out)} lines, the seed {len(lines)}")
    for i, (new, old) in enumerate(zip(out, lines), 1):
        if new.lstrip() != old.strip():
            raise SeedError(f"re-indented line {i} is not the seed's line: {old.strip()[:80]!r}")
    # Lines 2.. of a multi-line string are string content: they must get no indentation.
    for first, last in _string_spans(text):
        for row in range(first + 1, last + 1):
            if depth[row - 1]:
                raise SeedError(f"indentation map indents line {row}, inside a string starting on line {first}")
    try:
        compile(text, "<seed: unified_grouped_conv_codegen.py, re-indented>", "exec")
    except SyntaxError as e:
        raise SeedError(f"the re-indented seed does not compile: line {e.lineno}: {e.msg}") from None


# ---- 3. stand-ins for the modules the seed imports but does not contain ------------------------------------------
def _not_called(name: str):
    def stand_in(*args, **kwargs):
        raise NotImplementedError(f"stand-in {name}: only GroupedConvKernelConfig.is_valid_for_arch calls it, and "
                                  "golden generation never does")
    stand_in.__name__ = name
    return stand_in


def _codegen_common() -> types.ModuleType:
    """codegen_common: the three names the seed imports from it."""
    mod = types.ModuleType("codegen_common")

    @dataclasses.dataclass
    class TileConfig:  # the nine tile fields the seed reads (config.tile.tile_m, ...)
        tile_m: int
        tile_n: int
        tile_k: int
        warp_m: int
        warp_n: int
        warp_k: int
        warp_tile_m: int
        warp_tile_n: int
        warp_tile_k: int

    @dataclasses.dataclass
    class TraitConfigBase:  # the fields GroupedConvTraitConfig inherits and the seed reads (tr.pipeline, tr.pad_m...)
        pipeline: str
        epilogue: str
        scheduler: str
        pad_m: bool
        pad_n: bool
        pad_k: bool

    def parallel_generate(generate_fn, items, parallel=True):
        """Sequential and in order: each item writes its own files, so the output is the same as CK's threads'."""
        return [generate_fn(item) for item in items]

    mod.TileConfig, mod.TraitConfigBase, mod.parallel_generate = TileConfig, TraitConfigBase, parallel_generate
    return mod


def _rules(name: str, helpers: tuple[str, ...]) -> types.ModuleType:
    mod = types.ModuleType(name)
    for h in helpers:
        setattr(mod, h, _not_called(f"{name}.{h}"))
    return mod


# Every module the seed imports that is not in the seed, and what stands in for it:
#   codegen_common                      TileConfig, TraitConfigBase (dataclasses with the fields the seed reads),
#                                       parallel_generate (sequential); see _codegen_common
#   grouped_conv.grouped_config_rules_full / _default
#                                       the seven validation helpers the seed imports; only is_valid_for_arch calls
#                                       them, which generation never does, so they raise if called
#   arch_filter                         not provided: the seed's own `except ImportError` sets HAS_ARCH_FILTER =
#                                       False, so is_config_valid accepts every config (ckspace's model has
#                                       already validated the golden kernels)
#   arch_specs_generated                not provided: imported only inside is_valid_for_arch
STAND_INS = {
    "codegen_common": _codegen_common,
    "grouped_conv": lambda: types.ModuleType("grouped_conv"),
    "grouped_conv.grouped_config_rules_full": lambda: _rules(
        "grouped_conv.grouped_config_rules_full",
        ("check_vectors", "is_valid_pipeline_for_variant", "is_streamk_valid_for_variant")),
    "grouped_conv.grouped_config_rules_default": lambda: _rules(
        "grouped_conv.grouped_config_rules_default",
        ("check_wmma_instance", "check_wmma_native_warp_tile", "get_warp_size", "check_tile_coverage")),
}


@contextlib.contextmanager
def seed_module(source: str) -> Iterator[types.ModuleType]:
    """The re-indented seed, executed as a module, with the stand-ins in sys.modules only while it is in use."""
    saved = {name: sys.modules.get(name) for name in (*STAND_INS, SEED_MODULE, "arch_filter")}
    root = logging.getLogger()
    root_state = (list(root.handlers), root.level)
    try:
        for name, make in STAND_INS.items():
            sys.modules[name] = make()
        sys.modules["grouped_conv"].__path__ = []  # a package, so `from grouped_conv.x import` resolves
        sys.modules["arch_filter"] = None  # an ImportError, whatever is installed: the seed's fallback applies
        mod = types.ModuleType(SEED_MODULE)
        sys.modules[SEED_MODULE] = mod  # dataclasses look the module up while building the config classes
        exec(compile(source, "<seed: unified_grouped_conv_codegen.py, re-indented>", "exec"), mod.__dict__)
        logging.getLogger(SEED_MODULE).setLevel(logging.WARNING)  # its per-kernel INFO lines are noise here
        yield mod
    finally:
        root.handlers[:] = root_state[0]  # undo the seed's logging.basicConfig
        root.setLevel(root_state[1])
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


# ---- 4. CK's configs for the golden kernels, and CK's output ---------------------------------------------------
def ck_config(ck: types.ModuleType, k: dict, arch: str):
    """CK's GroupedConvKernelConfig / DepthwiseConvKernelConfig for one kernel's fields (ckspace.rules.names.parse_name)."""
    if k["variant"] == "forward_depthwise":
        return ck.DepthwiseConvKernelConfig(
            tile_h=k["dw_tile_h"], tile_w=k["dw_tile_w"], filt=k["filter_size"], str_h=k["stride_h"],
            str_w=k["stride_w"], pad_h=k["pad_h"], pad_w=k["pad_w"], nbatch=k["nbatch"], sub_h=k["sub_h"],
            sub_w=k["sub_w"], in_vec=k["in_vec"], out_vec=k["out_vec"], ndim_spatial=k["ndim"], arch=arch,
            layout=k["layout"], datatype=k["dtype"])
    streamk = ck.StreamKConfig(streamk_enabled=True, strategy=ck.StreamKReductionStrategy(k["streamk"].upper()),
                               streamk_persistent=k["streamk_persistent"]) if k["streamk"] != "none" \
        else ck.StreamKConfig()
    trait = ck.GroupedConvTraitConfig(
        pipeline=k["pipeline"], epilogue=k["epilogue"], scheduler=k["scheduler"], pad_m=k["pad_m"],
        pad_n=k["pad_n"], pad_k=k["pad_k"], double_smem_buffer=k["double_smem_buffer"],
        num_groups_to_merge=k["num_groups_to_merge"], split_image=k["split_image"], explicit_gemm=k["explicit_gemm"],
        two_stage=k["two_stage"], specialization=k["specialization"], streamk_config=streamk)
    tile = ck.TileConfig(tile_m=k["tile_m"], tile_n=k["tile_n"], tile_k=k["tile_k"], warp_m=k["wave_m"],
                         warp_n=k["wave_n"], warp_k=k["wave_k"], warp_tile_m=k["warp_tile_m"],
                         warp_tile_n=k["warp_tile_n"], warp_tile_k=k["warp_tile_k"])
    return ck.GroupedConvKernelConfig(
        tile=tile, trait=trait, variant=ck.GroupedConvVariant(k["variant"]), ndim_spatial=k["ndim"], arch=arch,
        layout=k["layout"], vector_size_a=k["vec_a"], vector_size_b=k["vec_b"], vector_size_c=k["vec_c"],
        num_groups_to_merge=k["num_groups_to_merge"], num_wave_groups=k["num_wave_groups"],
        double_smem_buffer=k["double_smem_buffer"], datatype=k["dtype"])


def golden_rel_paths(names: list[str]) -> list[str]:
    """The files kept as golden: per kernel its header and wrapper; the include_all and registration headers.
    (CK's one-line per-kernel .cpp units are not kept: ckspace chunks kernels into its own compile units.)"""
    rels = [f"{n}.hpp" for n in names] + [f"dispatcher_wrappers/dispatcher_wrapper_{n}.hpp" for n in names]
    rels += [f"include_all_grouped_conv_{v}_kernels.hpp" for v in ("fwd", "bwd_data", "bwd_weight")]
    return rels + ["dispatcher_wrappers/register_all_grouped_conv_kernels.hpp"]


def ck_output(ck: types.ModuleType, kernels: list[dict], arch: str) -> dict[str, str]:
    """Run CK's UnifiedGroupedConvCodegen.generate_all on the kernels; the golden files it writes."""
    configs = []
    for k in kernels:
        cfg = ck_config(ck, k, arch)
        if cfg.name(k["dtype"]) != k["name"]:  # CK's own naming must give back ckspace's name
            raise SeedError(f"CK names the config of {k['name']} {cfg.name(k['dtype'])}")
        configs.append(cfg)
    with tempfile.TemporaryDirectory(prefix="ck_seed_") as tmp:
        out = Path(tmp)
        codegen = ck.UnifiedGroupedConvCodegen(output_dir=out, gpu_target=arch, enable_arch_filter=False)
        results = codegen.generate_all(configs=configs, datatypes=list(DTYPES), parallel=False)
        if results["failed"] or len(results["kernels"]) != len(kernels):
            raise SeedError(f"CK's generator failed: {results['failed'] or results['kernels']}")
        return {rel: (out / rel).read_text(encoding="utf-8") for rel in golden_rel_paths([k["name"] for k in kernels])}


def golden_kernels() -> tuple[list[dict], str]:
    sys.path.insert(0, str(REPO))
    try:
        from ckspace.rules.names import parse_name  # name -> fields (the name grammar, not the emitter)
    finally:
        sys.path.pop(0)
    data = json.loads((GOLDEN / "kernels.json").read_text(encoding="utf-8"))
    return [{**parse_name(n), "name": n} for n in data["kernels"]], data["arch"]


def regenerate(seeds: Path) -> dict[str, str]:
    """CK's golden files for kernels.json, from the seed in `seeds`."""
    imap = load_indent_map()
    source = reindent(seed_lines(seeds, imap), imap)
    kernels, arch = golden_kernels()
    with seed_module(source) as ck:
        return ck_output(ck, kernels, arch)


def cpp_tokens(text: str) -> list[str]:
    """C++ tokens as tests/test_emit.py compares them: words and single punctuation characters, whitespace aside."""
    import re

    return re.findall(r"\w+|\S", text)


def _template_kind(k: dict) -> tuple:
    """The fields that choose between branches of CK's generator and of ckspace's templates."""
    if k["variant"] == "forward_depthwise":
        return ("depthwise", k["dtype"], k["ndim"])
    return tuple(k[f] for f in ("variant", "pipeline", "scheduler", "two_stage", "streamk", "streamk_persistent",
                                "explicit_gemm", "specialization", "double_smem_buffer", "split_image", "ndim",
                                "dtype")) + (k["num_groups_to_merge"] != 1,)


def compare_emitter(seeds: Path, arch: str, everything: bool) -> int:
    """CK's generator vs ckspace's 2026.06 templates, beyond the golden files; prints figures, 1 on a difference."""
    import time

    sys.path.insert(0, str(REPO))
    from ckspace import Space
    from ckspace.codegen import emit as EM
    from ckspace.errors import CkspaceError
    from ckspace.rules.names import parse_name

    try:
        space = Space(arch=arch)
    except CkspaceError as e:
        raise SeedError(str(e)) from None
    kernels = list(space.enumerate())
    if not everything:
        first: dict[tuple, dict] = {}
        for k in kernels:
            first.setdefault(_template_kind(k), k)
        kernels = list(first.values())
    imap = load_indent_map()
    source = reindent(seed_lines(seeds, imap), imap)
    t0 = time.perf_counter()
    with seed_module(source) as ck:
        theirs = ck_output(ck, [{**parse_name(k["name"]), "name": k["name"]} for k in kernels], arch)
    t1 = time.perf_counter()
    differing = []
    with tempfile.TemporaryDirectory(prefix="ckspace_emit_") as tmp:
        EM.emit(space, kernels, Path(tmp), revision="2026.06")
        for rel, text in sorted(theirs.items()):
            mine = Path(tmp, rel)
            if not mine.is_file() or cpp_tokens(mine.read_text(encoding="utf-8")) != cpp_tokens(text):
                differing.append(rel)
    t2 = time.perf_counter()
    for rel in differing[:10]:
        print(f"DIFFERS from CK's generator output: {rel}")
    print(f"{arch}: {len(kernels)} kernels ({'all' if everything else 'one per template-relevant kind'}), "
          f"{len(theirs)} files: {len(differing)} differ from CK's generator (CK {t1 - t0:.1f} s, "
          f"ckspace emit + compare {t2 - t1:.1f} s)")
    return 1 if differing else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite tests/golden/2026.06 from CK's generator")
    mode.add_argument("--check", action="store_true", help="compare tests/golden/2026.06 with CK's generator")
    mode.add_argument("--print-source", action="store_true", help="print the re-indented seed")
    mode.add_argument("--compare-emitter", action="store_true",
                      help="compare ckspace's 2026.06 templates with CK's generator beyond the golden files")
    ap.add_argument("--all", action="store_true", help="with --compare-emitter: every kernel of the arch")
    ap.add_argument("--arch", default="gfx950", help="with --compare-emitter (default gfx950)")
    ap.add_argument("--seeds", type=Path, default=DEFAULT_SEEDS, help=f"seed directory (default {DEFAULT_SEEDS})")
    args = ap.parse_args(argv)
    try:
        if args.print_source:
            imap = load_indent_map()
            sys.stdout.write(reindent(seed_lines(args.seeds, imap), imap))
            return 0
        if args.compare_emitter:
            return compare_emitter(args.seeds, args.arch, args.all)
        files = regenerate(args.seeds)
    except SeedError as e:
        print(f"golden_from_seed: error: {e}", file=sys.stderr)
        return 2

    problems = 0
    for rel, text in sorted(files.items()):
        path = GOLDEN / rel
        if args.write:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        elif not path.is_file() or path.read_text(encoding="utf-8") != text:
            print(f"DIFFERS from CK's generator output: {rel}")
            problems += 1
    print(f"{len(files)} golden files {'written' if args.write else 'compared'} from CK's generator "
          f"(the seed, re-indented and run); {problems} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
