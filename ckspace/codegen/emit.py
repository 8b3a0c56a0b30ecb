"""`ckspace emit`: a selection of kernels turned into CK Tile C++ from the jinja2 templates under templates/.

Per kernel (as CK's dispatcher codegen writes them):
    <name>.hpp                                         config struct + launcher (launch, is_supported, instance string)
    dispatcher_wrappers/dispatcher_wrapper_<name>.hpp  factory for CK's dispatcher registry
For the selection:
    units/grouped_conv_instances_<i>.cpp               compile units, up to --chunk-size instances each
    register_<fwd|bwd_data|bwd_weight>_chunk_<i>.cpp   chunked registration with CK's dispatcher
    register_all_grouped_conv_kernels.cpp              the top-level register_all
    include_all_grouped_conv_<variant>_kernels.hpp     every kernel header of one direction
    dispatcher_wrappers/register_all_grouped_conv_kernels.hpp   registration header with the counts per variant
    build.ninja                                        compile units -> device objects (run by `ckspace build`)
    manifest.json                                      kernel -> files, fields, digest of its text; every file

Templates are chosen per CK API revision (templates/revisions.toml): `--ck-api 2026.06` (default, newest),
`--ck-api 2025.11`, or `--ck-api auto` with `--ck-include DIR`. A revision that cannot express some kernels has its
own rule family (`ck-api-2025.11`), switched on with the revision, so the selection holds only kernels it can build.

All writes go through `ckspace.codegen.manifest.Writer`: atomic, incremental, inside DIR only, stale files removed by the
manifest (and its journal of the files an interrupted emit wrote) only. The directory is held (`files.locked`)
while emitting, and what a killed emit left half-written is swept first.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence, SupportsInt, cast

from ..errors import CkspaceError, DataError, UsageError
from .ckapi import families_for_ck_api, resolve_revision, revisions, templates_dir
from ..files import ensure_dir, locked, sweep_temporaries
from .manifest import WriteStats, Writer, digest
from .units import VARIANT_ORDER, emit_order  # the order of the kernels in the files and the compile units

if TYPE_CHECKING:  # pragma: no cover
    import jinja2

    from ..solve.kernels import KernelSpace

DEFAULT_CHUNK_SIZE = 25
UNITS_DIR = "units"
WRAPPERS_DIR = "dispatcher_wrappers"
EMITTED_DIRS = ("", UNITS_DIR, WRAPPERS_DIR)  # where emit writes (and so where its temporaries can be left)
STATE_DIR = ".ckspace"  # build.ninja's builddir: ninja's state, and the build log
OBJ_DIR = "obj"  # the objects, one folder per offload arch (object_path)
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")
ARCH_RE = re.compile(r"^gfx[0-9a-f]{2,5}(:[a-z]+[+-])*$")

# Registration groups, in CK's order; depthwise kernels register as forward ones (CK globs grouped_conv_fwd_*).
REG_GROUPS = ("fwd", "bwd_data", "bwd_weight")
REG_GROUP = {"forward": "fwd", "forward_depthwise": "fwd", "bwd_data": "bwd_data", "bwd_weight": "bwd_weight"}
INCLUDE_ALL = {
    "fwd": ("include_all_grouped_conv_fwd_kernels.hpp", "forward", "SelectedConvKernelLauncher"),
    "bwd_data": ("include_all_grouped_conv_bwd_data_kernels.hpp", "backward data", "SelectedConvBwdDataLauncher"),
    "bwd_weight": ("include_all_grouped_conv_bwd_weight_kernels.hpp", "backward weight", "SelectedConvBwdWeightLauncher"),
}


# ---- template sets ------------------------------------------------------------------------------------------------
def template_env(rev: str) -> "jinja2.Environment":
    """A jinja2 environment over the revision's templates, then its fallbacks'."""
    import jinja2

    _, revs = revisions()
    base = templates_dir()
    chain, seen = [], set()
    r: str | None = rev
    while r and r not in seen:
        seen.add(r)
        chain.append(str(base / r))
        r = revs[r].fallback
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(chain),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    return env


# ---- the selection -------------------------------------------------------------------------------------------------
def select(space: "KernelSpace", set_name: str | None = None, variant=None, ndim=None, dtype=None,
           where: str | None = None) -> list[dict]:
    """The kernels to emit: a selection (`tiny`, `tests`, CK's procedures) or the space's catalog, filtered as
    enumerate filters (ckspace.select.sets.selected_configs, the one place a selection is filtered)."""
    from ..select.sets import is_selection, selected_configs

    if not is_selection(set_name):
        return list(space.enumerate(variant=variant, ndim=ndim, dtype=dtype, where=where))
    configs, _ = selected_configs(space, cast(str, set_name), variant=variant, ndim=ndim, dtype=dtype, where=where)
    return [dict(c) for c in configs]


# ---- rendering -----------------------------------------------------------------------------------------------------
class _Kernel(dict[str, Any]):
    """A kernel's fields for the templates (jinja2 reads `k.name` as k["name"]), plus what they need besides."""


def kernel_context(cfg: Mapping[str, object], arch: str, block_per_cu) -> _Kernel:
    name = str(cfg["name"])
    if not NAME_RE.match(name):
        raise UsageError(f"refusing kernel name {name!r}: a kernel name must be a C++ identifier "
                         "(letters, digits, underscores), as it names files and types")
    k = _Kernel(cfg)
    k["arch"] = arch
    k["ns"] = "ns_" + name.replace("-", "_")
    if cfg["variant"] != "forward_depthwise":
        k["block_per_cu"] = block_per_cu(cfg)
    return k


def same_cpp(space, kernels: Sequence[_Kernel]) -> None:
    """Set each kernel's `cpp_of`: the first kernel (in emit order) with the same C++, itself if none. Kernels that
    differ only in fields the C++ ignores (fields.toml `code = false`: pad_m/n/k) share one instantiation."""
    from .units import cpp_groups

    lead_of = {n: lead for lead, names in cpp_groups(kernels, space.data.fields).items() for n in names}
    for k in kernels:
        k["cpp_of"] = lead_of[k["name"]]


def _block_per_cu_fn(space) -> Callable[[Mapping[str, object]], int]:
    """block_per_cu from the model's derived-field formula (fields.toml [derive.block_per_cu])."""
    from ..rules import expr as E

    node = space.data.derives["block_per_cu"].expr
    resolve = space.model.resolve
    memo: dict[tuple, int] = {}

    def fn(cfg: Mapping[str, object]) -> int:
        key = (cfg["pipeline"], cfg["double_smem_buffer"])
        if key not in memo:
            memo[key] = int(cast(SupportsInt, E.evaluate(node, cfg, resolve)))  # the formula is a number
        return memo[key]

    return fn


@dataclass
class EmitResult:
    out_dir: Path
    revision: str
    arch: str
    kernels: int
    units: list[str]
    stats: WriteStats
    seconds: dict[str, float] = field(default_factory=dict)
    expected_seconds: list[float] = field(default_factory=list)  # each unit's expected compile time on one core


def unit_name(i: int) -> str:
    return f"{UNITS_DIR}/grouped_conv_instances_{i:04d}.cpp"


def emit(space, configs: Sequence[Mapping[str, object]], out_dir: str | Path, revision: str | None = None,
         chunk_size: int = DEFAULT_CHUNK_SIZE, selection: Mapping[str, object] | None = None,
         archs: Sequence[str] | None = None, units: Sequence[Sequence[str]] | None = None) -> EmitResult:
    """Write the selection's C++ into `out_dir` (safely, incrementally); return what was written. `units` groups
    the kernel names into compile units explicitly (verify's bisection); by default they are chunks of
    `chunk_size` in selection order."""
    import jinja2

    root = ensure_dir(Path(out_dir))
    try:
        with locked(root):
            sweep_leftovers(root)
            return _emit(space, configs, out_dir, revision, chunk_size, selection, archs, units)
    except jinja2.TemplateError as exc:
        located = cast("jinja2.TemplateSyntaxError", exc)  # read only where there is a filename: a syntax error
        where = f"{located.filename}:{located.lineno}: " if getattr(exc, "filename", None) else ""
        raise DataError(f"template error: {where}{exc.message or exc}") from None


def sweep_leftovers(root: Path) -> int:
    """Remove what a killed emit or build left half-written in `root`; return how many files. Call it holding
    `files.locked(root)`, so that none of them is another run's work in progress."""
    removed = sweep_temporaries(root, (*EMITTED_DIRS, STATE_DIR))
    obj = root / OBJ_DIR
    if obj.is_dir() and not obj.is_symlink():  # (a planted symlink's target is not ckspace's to sweep)
        # the compile rule's `-o $out.tmp` (build.ninja.j2), and the compiler's own temporary for it
        # (`<obj>-XXXXXXXX.tmp.tmp`, left when the compiler is killed): obj/ holds nothing else ending in .tmp
        for path in obj.rglob("*.tmp"):
            try:
                path.unlink()
                removed += 1
            except OSError:
                pass
    return removed


def _emit(space, configs, out_dir, revision, chunk_size, selection, archs, unit_groups=None) -> EmitResult:
    t0 = time.perf_counter()
    rev = resolve_revision(revision)
    if chunk_size < 1:
        raise UsageError("--chunk-size must be at least 1")
    arch = space.arch
    missing = [f for f in revisions()[1][rev].families if f not in space.families]
    if missing:
        raise UsageError(f"CK API {rev} can build only what its rule family allows: make the space with "
                         f"rules {families_for_ck_api(rev) or ','.join(f'+{f}' for f in missing)!r} (the CLI does so for --ck-api "
                         f"{rev}); missing {', '.join(missing)}")
    env = template_env(rev)
    writer = Writer(Path(out_dir))
    bpc = _block_per_cu_fn(space)
    kernels = emit_order([kernel_context(c, arch, bpc) for c in configs])
    same_cpp(space, kernels)
    names = [k["name"] for k in kernels]
    if len(set(names)) != len(names):
        raise CkspaceError("internal error: the selection holds a kernel twice")
    unsupported = {k["variant"] for k in kernels} - set(VARIANT_ORDER)
    if unsupported:
        raise UsageError(f"unknown variant(s) {sorted(unsupported)}")
    t_sel = time.perf_counter()

    t_gemm = env.get_template("kernel_gemm.hpp.j2")
    t_dw = env.get_template("kernel_depthwise.hpp.j2") if any(
        k["variant"] == "forward_depthwise" for k in kernels) else None
    t_wrap = env.get_template("dispatcher_wrapper.hpp.j2")
    manifest_kernels: dict[str, dict] = {}
    for k in kernels:
        name = k["name"]
        header = f"{name}.hpp"
        wrapper = f"{WRAPPERS_DIR}/dispatcher_wrapper_{name}.hpp"
        # (t_dw is None only where no kernel is depthwise)
        text = (cast("jinja2.Template", t_dw) if k["variant"] == "forward_depthwise" else t_gemm).render(k=k)
        writer.write(header, text)
        writer.write(wrapper, t_wrap.render(k=k, rel_path=header))
        fields = {key: value for key, value in k.items() if key not in ("ns", "arch", "cpp_of")}
        manifest_kernels[name] = {"variant": k["variant"], "files": [header, wrapper], "digest": digest(text),
                                  "fields": fields}
        if k["cpp_of"] != name:  # its unit calls that kernel's launcher: one instantiation for both
            manifest_kernels[name]["same_cpp_as"] = k["cpp_of"]
    t_kern = time.perf_counter()

    # compile units: the selection in order (directions kept together), chunk_size instances each
    t_unit = env.get_template("unit.cpp.j2")
    units: dict[str, list[str]] = {}
    by_name = {k["name"]: k for k in kernels}
    if unit_groups is not None:
        chunks = [[by_name[n] for n in g] for g in unit_groups]
        if sorted(n for g in unit_groups for n in g) != sorted(names):
            raise CkspaceError("internal error: the compile units do not partition the selection")
    else:  # chunk_size distinct C++ kernels a unit, each with the kernels that share its C++
        from .units import with_sharers

        sharing: dict[str, list[str]] = {}
        for k in kernels:
            sharing.setdefault(k["cpp_of"], []).append(k["name"])
        leads = list(sharing)
        chunks = [[by_name[n] for n in unit]
                  for unit in with_sharers([leads[i:i + chunk_size] for i in range(0, len(leads), chunk_size)],
                                           sharing)]
    for index, chunk in enumerate(chunks):
        rel = unit_name(index)
        writer.write(rel, t_unit.render(kernels=chunk, unit=index, arch=arch, revision=rev))
        units[rel] = [k["name"] for k in chunk]
        for k in chunk:
            manifest_kernels[k["name"]]["unit"] = rel
            manifest_kernels[k["name"]]["files"].append(rel)

    # registration (CK's dispatcher): chunks per direction, the top-level register_all, include_all, header
    groups: dict[str, list[_Kernel]] = {g: [] for g in REG_GROUPS}
    for k in kernels:
        groups[REG_GROUP[k["variant"]]].append(k)
    for g in REG_GROUPS:
        groups[g].sort(key=lambda k: k["name"])
    t_chunk = env.get_template("register_chunk.cpp.j2")
    reg_chunks: dict[str, int] = {}  # per direction, how many registration chunks
    for g, ks in groups.items():
        n = 0
        for i in range(0, len(ks), chunk_size):
            part = ks[i:i + chunk_size]
            rel = f"register_{g}_chunk_{n}.cpp"
            writer.write(rel, t_chunk.render(kernels=part, variant=g, chunk_index=n, first_index=i))
            for k in part:
                manifest_kernels[k["name"]]["files"].append(rel)
            n += 1
        reg_chunks[g] = n
    writer.write("register_all_grouped_conv_kernels.cpp",
                 env.get_template("register_all.cpp.j2").render(chunks=reg_chunks))
    t_inc = env.get_template("include_all.hpp.j2")
    for g, (fname, desc, alias) in INCLUDE_ALL.items():
        writer.write(fname, t_inc.render(headers=sorted(f"{k['name']}.hpp" for k in groups[g]),
                                         variant_desc=desc, launcher_alias=alias))
    writer.write(f"{WRAPPERS_DIR}/register_all_grouped_conv_kernels.hpp",
                 env.get_template("register_all_header.hpp.j2").render(
                     groups={g: [k["name"] for k in ks] for g, ks in groups.items()},
                     all_names=sorted(names)))
    build_archs = list(archs) if archs else [arch]
    writer.write("build.ninja", render_build_ninja(env, list(units), build_archs))
    t_rest = time.perf_counter()

    writer.remove_stale()
    from ..version import __version__

    writer.finish({
        "tool": "ckspace",
        "version": __version__,
        "arch": arch,
        "ck_api": rev,
        "chunk_size": chunk_size,
        "rules": sorted(f for f in space.families if f != "model"),
        "selection": dict(selection or {}),
        "build_archs": build_archs,
        "counts": {g: len(ks) for g, ks in groups.items()},
        "units": units,
        "kernels": manifest_kernels,
    })
    t_end = time.perf_counter()
    return EmitResult(Path(out_dir), rev, arch, len(kernels), list(units), writer.stats, {
        "select": t_sel - t0, "kernels": t_kern - t_sel, "units+registration": t_rest - t_kern,
        "manifest": t_end - t_rest, "total": t_end - t0,
    })


def arch_id(arch: str) -> str:
    """An offload arch (gfx942, gfx90a:xnack+) as a ninja variable / directory name."""
    return arch.replace(":", "_").replace("+", "on").replace("-", "off")


def check_offload_arch(arch: str) -> str:
    if not ARCH_RE.match(arch):
        raise UsageError(f"bad offload arch {arch!r}: expected gfxNNN with optional features, e.g. gfx942 or gfx90a:xnack+")
    return arch


def object_path(arch: str, unit: str) -> str:
    return f"{OBJ_DIR}/{arch_id(arch)}/{Path(unit).stem}.o"


def render_build_ninja(env, units: Sequence[str], archs: Sequence[str]) -> str:
    for a in archs:
        check_offload_arch(a)
    targets = [{"arch": a, "id": arch_id(a),
                "objects": [{"unit": u, "obj": object_path(a, u), "stem": Path(u).stem} for u in units]}
               for a in archs]
    return env.get_template("build.ninja.j2").render(targets=targets)
