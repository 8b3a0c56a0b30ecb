"""CK's dispatcher JSON configs (the schema of CK's `grouped_config_rules_json.py` / `load_configs_from_json`) as
kernel configs.

A config file is one JSON object: `variant` (forward, fwd, forward_depthwise, bwd_data, bwd_weight),
`ndim_spatial`, `layout`, `datatype` and `instances`, a list of entries (docs/ck-configs.md). Each entry becomes one
kernel, named the way CK names it (`GroupedConvKernelConfig.name` / `DepthwiseConvKernelConfig.name`), and read
back with ckspace's name grammar, which is CK's: so a config, its CK name and its ckspace config are one thing.

Reading is strict where CK's loader is lenient: a missing or mistyped key, an unknown key (CK ignores a typo such as
`tile_mm` and builds the default), or a header CK would reject is a CkConfigError naming the file, the entry and
the key. Whether a kernel breaks a fact of an arch is not decided here (ckspace.solve.listed does that).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, cast

from ..errors import CkspaceError, KernelNameError
from ..lines import MAX_NAME, parse_json, read_bounded
from .kernel import stratum_of
from .names import parse_name
from .schema import display

MAX_FILE_BYTES = 64 * 1024 * 1024  # CK's largest config file is 184 KB; a larger one is not a config
MAX_FILES = 10_000

VARIANTS = {"forward": "fwd", "fwd": "fwd", "forward_depthwise": "fwd", "bwd_data": "bwd_data",
            "bwd_weight": "bwd_weight"}
HEADER = {"variant": str, "ndim_spatial": int, "layout": str, "datatype": str, "instances": list}
GEMM_REQUIRED = ("tile_m", "tile_n", "tile_k", "warp_m", "warp_n", "warp_k", "warp_tile_m", "warp_tile_n",
                 "warp_tile_k", "vector_size_a", "vector_size_b", "vector_size_c")
GEMM_WORDS = ("pipeline", "scheduler", "epilogue")
# CK's defaults for an absent key (inst.get(key, default) in the loader).
GEMM_OPTIONAL: dict[str, object] = {
    "double_smem_buffer": False, "num_groups_to_merge": 1, "num_wave_groups": 1, "specialization": "default",
    "two_stage": False, "explicit_gemm": False, "split_image": False, "streamk_enabled": False,
    "streamk_reduction_strategy": None, "streamk_persistent": False,
}
DEPTHWISE_REQUIRED = ("tile_h", "tile_w", "filt", "str_h", "str_w", "pad_h", "pad_w", "nbatch", "sub_h", "sub_w",
                      "in_vec", "out_vec")
# CK's loader skips these bwd_weight pipelines (its codegen cannot build them for bwd_weight).
BWD_WEIGHT_SKIPPED = ("compv2", "basic_v2")


class CkConfigError(CkspaceError):
    """A CK JSON config that cannot be read: one line naming the file, the entry and the key (exit 2)."""

    exit_code = 2


@dataclass(frozen=True)
class Entry:
    """One kernel of a config file: where it came from, its CK name and its config (ckspace's fields)."""

    file: str  # the file as given (or its path inside a stored table)
    index: int  # position in `instances`
    id: object  # the entry's `id` (CK uses it only to pick one entry)
    name: str
    config: dict[str, object]

    @property
    def where(self) -> str:
        return f"{self.file}: instances[{self.index}] (id {_id_text(self.id)})"


@dataclass(frozen=True)
class Skipped:
    """An entry CK's loader skips (a bwd_weight compv2/basic_v2 pipeline)."""

    file: str
    index: int
    id: object
    reason: str


def _fail(where: str, message: str) -> CkConfigError:
    return CkConfigError(f"{where}: {message}")


def _typed(where: str, key: str, value: object, kind: type) -> object:
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if not ok:
        want = {int: "an integer", bool: "true or false", str: "a string", list: "a list"}[kind]
        raise _fail(where, f"key {key!r}: expected {want}, got {_shown(value)}")
    if kind is int and not 0 <= cast(int, value) < 2**31:  # value is a `kind` (checked above)
        raise _fail(where, f"key {key!r}: {_shown(value)} is out of range")
    if kind is str and not (0 < len(cast(str, value)) <= 64 and cast(str, value).isascii()):
        raise _fail(where, f"key {key!r}: {_shown(value)} is not a word")
    return value


def _shown(value: object) -> str:
    """A value of a file for an error line: JSON for a scalar (one line, at most 40 characters), a list or object by
    its kind (it may nest deeper than json.dumps goes)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**40:
        return "an integer of more than 40 digits"  # (str() of thousands of digits would raise)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return json.dumps(value)[:40]
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def _id_text(value: object) -> str:
    """An entry's `id` (any JSON: CK does not check it) as its error lines show it: as written when short and plain."""
    if isinstance(value, str) and len(value) <= 40 and value.isprintable():
        return value
    return _shown(value)


def read_header(doc: object, where: str) -> dict[str, Any]:
    if not isinstance(doc, dict):
        raise _fail(where, "expected a JSON object with variant, ndim_spatial, layout, datatype and instances")
    head = {}
    for key, kind in HEADER.items():
        if key not in doc:
            raise _fail(where, f"missing key {key!r} (CK's loader reads variant, ndim_spatial, layout, datatype, "
                               "instances)")
        head[key] = _typed(where, key, doc[key], kind)
    if head["variant"] not in VARIANTS:
        raise _fail(where, f"key 'variant': {head['variant']!r} is not one of {', '.join(VARIANTS)} (CK would raise)")
    return head


def _gemm_name(head: Mapping[str, Any], e: Mapping[str, Any]) -> str:
    """CK's GroupedConvKernelConfig.name(datatype), for a checked entry."""
    name = (f"grouped_conv_{VARIANTS[head['variant']]}_{head['datatype']}_{head['layout'].lower()}_"
            f"{head['ndim_spatial']}d_{e['pipeline']}_{e['epilogue']}_{e['scheduler']}_"
            f"{e['tile_m']}x{e['tile_n']}x{e['tile_k']}_{e['warp_m']}x{e['warp_n']}x{e['warp_k']}_"
            f"{e['warp_tile_m']}x{e['warp_tile_n']}x{e['warp_tile_k']}")
    vec = (e["vector_size_a"], e["vector_size_b"], e["vector_size_c"])
    if vec != (4, 8, 8):  # CK leaves its default vectors out of the name
        name += "_vec%d_%d_%d" % vec
    if e["num_wave_groups"] != 1:
        name += f"_wg{e['num_wave_groups']}"
    if e["num_groups_to_merge"] != 1:
        name += f"_gm{e['num_groups_to_merge']}"
    if e["double_smem_buffer"]:
        name += "_dsb"
    if e["two_stage"]:
        name += "_2stage"
    if e["specialization"] != "default":
        name += "_" + e["specialization"]
    if e["explicit_gemm"]:
        name += "_explicit_gemm"
    if e["streamk_enabled"]:
        name += "_streamk_" + str(e["streamk_reduction_strategy"] or "tree").lower()
        if e["streamk_persistent"]:
            name += "_persistent"
    if e["split_image"]:
        name += "_large_tensor"
    return name


def _depthwise_name(head: Mapping[str, Any], e: Mapping[str, Any]) -> str:
    """CK's DepthwiseConvKernelConfig.name(datatype)."""
    return (f"grouped_conv_fwd_depthwise_{head['datatype']}_{head['layout']}_{head['ndim_spatial']}d_"
            f"{e['tile_h']}x{e['tile_w']}_f{e['filt']}_s{e['str_h']}x{e['str_w']}_p{e['pad_h']}x{e['pad_w']}_"
            f"nb{e['nbatch']}_sub{e['sub_h']}x{e['sub_w']}_vec{e['in_vec']}_{e['out_vec']}")


def checked_entry(head: Mapping[str, Any], raw: object, where: str) -> dict[str, Any]:
    """The entry with CK's defaults filled in, every key present and typed; CkConfigError otherwise."""
    if not isinstance(raw, dict):
        raise _fail(where, "expected an object (one kernel's keys)")
    depthwise = head["variant"] == "forward_depthwise"
    required = ("id", *DEPTHWISE_REQUIRED) if depthwise else ("id", *GEMM_REQUIRED, *GEMM_WORDS)
    optional = {} if depthwise else GEMM_OPTIONAL
    unknown = [k for k in raw if k not in required and k not in optional]
    if unknown:
        raise _fail(where, f"unknown key {unknown[0][:40]!r} (CK's loader would ignore it; keys of a "
                           f"{'depthwise' if depthwise else 'GEMM'} entry: {', '.join((*required, *optional))})")
    entry: dict[str, Any] = {}
    for key in required:
        if key not in raw:
            raise _fail(where, f"missing key {key!r}")
        kind = str if key in GEMM_WORDS else int
        entry[key] = raw[key] if key == "id" else _typed(where, key, raw[key], kind)
    for key, default in optional.items():
        value = raw.get(key, default)
        if key == "streamk_reduction_strategy":
            if value is not None:
                _typed(where, key, value, str)
        elif value is not default:
            _typed(where, key, value, type(default))
        entry[key] = value
    return entry


def entries_of(doc: object, file: str) -> tuple[list[Entry], list[Skipped]]:
    """The kernels of one parsed config document, in file order, and the entries CK's loader skips."""
    head = read_header(doc, file)
    out: list[Entry] = []
    skipped: list[Skipped] = []
    depthwise = head["variant"] == "forward_depthwise"
    for i, raw in enumerate(head["instances"]):
        where = f"{file}: instances[{i}]" + (f" (id {_id_text(raw.get('id'))})" if isinstance(raw, dict) else "")
        e = checked_entry(head, raw, where)
        if head["variant"] == "bwd_weight" and e["pipeline"] in BWD_WEIGHT_SKIPPED:
            skipped.append(Skipped(file, i, e["id"], f"CK's loader skips bwd_weight pipeline {e['pipeline']}"))
            continue
        name = _depthwise_name(head, e) if depthwise else _gemm_name(head, e)
        try:
            if len(name) > MAX_NAME:
                raise KernelNameError(name[:60] + "...", "name", f"at most {MAX_NAME} characters", str(len(name)))
            cfg = parse_name(name)
        except KernelNameError as exc:
            key = _key_of(exc.part)
            raise _fail(where, f"key {key!r}: {exc.got!r} is not a value ckspace's name grammar knows "
                               f"({exc.part}: expected {exc.expected})") from None
        cfg.pop("kind", None)
        cfg["name"] = name
        out.append(Entry(file, i, e["id"], name, cfg))
    return out, skipped


_PART_KEYS = {"variant": "variant", "dtype": "datatype", "layout": "layout", "ndim": "ndim_spatial",
              "pipeline": "pipeline", "epilogue": "epilogue", "scheduler": "scheduler"}


def _key_of(part: str) -> str:
    return _PART_KEYS.get(part, part)


def read_json(path: Path, shown: str | None = None) -> tuple[list[Entry], list[Skipped]]:
    """One JSON config file; CkConfigError for an unreadable or malformed one. Read with a bound and parsed strictly
    (ckspace.lines): /dev/zero, a FIFO, deep nesting or an integer of thousands of digits is one line naming the file
    (and the key)."""
    shown = shown or display(path)
    blob = read_bounded(path, MAX_FILE_BYTES, shown, regular_only=True, error=CkConfigError)
    return entries_of(parse_json(blob, shown, error=CkConfigError), shown)


def config_files(path: Path) -> list[Path]:
    """A file, or every *.json under a directory (sorted, recursively, as CK's tree lays them out)."""
    if path.is_file():
        return [path]
    if not path.exists():
        raise CkConfigError(f"{display(path)}: no such file or directory")
    if not path.is_dir():
        raise CkConfigError(f"{display(path)}: not a regular file or a directory of *.json config files")
    files = sorted(p for p in path.rglob("*.json") if p.is_file())
    if not files:
        raise CkConfigError(f"{display(path)}: no *.json config files in it")
    if len(files) > MAX_FILES:
        raise CkConfigError(f"{display(path)}: {len(files):,} JSON files, more than {MAX_FILES:,}")
    return files


def read_path(path: str | Path) -> tuple[list[Entry], list[Skipped]]:
    """Every kernel of a config file or directory (file names relative to the directory)."""
    root = Path(path)
    entries: list[Entry] = []
    skipped: list[Skipped] = []
    for f in config_files(root):
        shown = str(f.relative_to(root)) if root.is_dir() else str(f)
        got, skip = read_json(f, shown)
        entries += got
        skipped += skip
    return entries, skipped


STORED_HEADER = ("variant", "ndim_spatial", "layout", "datatype")  # a stored document's header keys


def documents_from_table(table: Mapping[str, Any], where: str,
                         wanted: Callable[[str, dict[str, Any]], bool] | None = None
                         ) -> Iterable[tuple[str, dict[str, Any]]]:
    """The config documents of a stored table (constraints/catalogs/ck-configs.toml): each `[[file]]` holds the
    header keys, `columns` and `rows`; an empty string in a row stands for JSON null. With `wanted`, only the
    documents it accepts by their path and header (no `instances` yet) come, and only their rows are read."""
    for i, f in enumerate(table.get("file", [])):
        at = f"{where}: file[{i}]"
        try:
            columns, rows = f["columns"], f["rows"]
            doc = {k: f[k] for k in STORED_HEADER}
        except (KeyError, TypeError) as exc:
            raise CkConfigError(f"{at}: missing key {exc}") from None
        path = str(f.get("path", at))
        if wanted is not None and not wanted(path, doc):
            continue
        instances = []
        for r, row in enumerate(rows):
            if not isinstance(row, list) or len(row) != len(columns):
                raise CkConfigError(f"{at}: rows[{r}]: expected {len(columns)} values")
            instances.append({c: (None if v == "" else v) for c, v in zip(columns, row)})
        doc["instances"] = instances
        yield path, doc


# -- writing: kernel configs as CK's config files (the inverse of entries_of) ----------------------------------------
# CK's tree: <variant>/<set>/<layout>_<datatype>.json (dispatcher/codegen/configs/grouped_conv), depthwise kernels in
# forward/ with the ngchw layout.
VARIANT_DIRS = {"forward": "forward", "forward_depthwise": "forward", "bwd_data": "backward_data",
                "bwd_weight": "backward_weight"}
LAYOUT_3D = "ndhwgc"  # CK's spelling of a 3D GEMM kernel's layout (a name may spell it nhwgc: the same kernel)


def config_entry(cfg: Mapping[str, object], index: int) -> dict[str, object] | None:
    """One kernel as an entry of CK's `instances` (every key written, CK's defaults too); None when CK's JSON cannot
    say it: a GEMM kernel without all three pads (CK's launcher always pads, FixedGemmParams::kPadM/N/K)."""
    if cfg["variant"] == "forward_depthwise":
        keys = (("tile_h", "dw_tile_h"), ("tile_w", "dw_tile_w"), ("filt", "filter_size"), ("str_h", "stride_h"),
                ("str_w", "stride_w"), ("pad_h", "pad_h"), ("pad_w", "pad_w"), ("nbatch", "nbatch"),
                ("sub_h", "sub_h"), ("sub_w", "sub_w"), ("in_vec", "in_vec"), ("out_vec", "out_vec"))
        return {"id": index, **{ck: cfg[ours] for ck, ours in keys}}
    if not (cfg["pad_m"] and cfg["pad_n"] and cfg["pad_k"]):
        return None
    streamk = cfg["streamk"]
    return {
        "id": index, "tile_m": cfg["tile_m"], "tile_n": cfg["tile_n"], "tile_k": cfg["tile_k"],
        "warp_m": cfg["wave_m"], "warp_n": cfg["wave_n"], "warp_k": cfg["wave_k"],
        "warp_tile_m": cfg["warp_tile_m"], "warp_tile_n": cfg["warp_tile_n"], "warp_tile_k": cfg["warp_tile_k"],
        "vector_size_a": cfg["vec_a"], "vector_size_b": cfg["vec_b"], "vector_size_c": cfg["vec_c"],
        "pipeline": cfg["pipeline"], "scheduler": cfg["scheduler"], "epilogue": cfg["epilogue"],
        "double_smem_buffer": cfg["double_smem_buffer"], "num_groups_to_merge": cfg["num_groups_to_merge"],
        "num_wave_groups": cfg["num_wave_groups"], "specialization": cfg["specialization"],
        "two_stage": cfg["two_stage"], "explicit_gemm": cfg["explicit_gemm"], "split_image": cfg["split_image"],
        "streamk_enabled": streamk != "none", "streamk_reduction_strategy": None if streamk == "none" else streamk,
        "streamk_persistent": cfg["streamk_persistent"],
    }


def to_documents(configs: Iterable[Mapping[str, object]], set_dir: str) -> tuple[dict[str, dict], list[str]]:
    """Kernel configs as CK's config documents, by path (<variant>/<set_dir>/<layout>_<datatype>.json, CK's split),
    each kernel an entry in the order given; and the names CK's JSON cannot express (config_entry)."""
    docs: dict[str, dict] = {}
    left_out: list[str] = []
    for cfg in configs:
        variant, ndim, dtype = stratum_of(cfg)
        layout = LAYOUT_3D if ndim == 3 and variant != "forward_depthwise" else str(cfg["layout"])
        path = f"{VARIANT_DIRS[variant]}/{set_dir}/{layout}_{dtype}.json"
        doc = docs.setdefault(path, {"variant": variant, "ndim_spatial": ndim, "layout": layout, "datatype": dtype,
                                     "instances": []})
        if doc["ndim_spatial"] != ndim or doc["variant"] != variant:
            raise CkConfigError(f"{path}: kernels of {doc['variant']} {doc['ndim_spatial']}D and {variant} {ndim}D "
                                "would share one file")
        entry = config_entry(cfg, len(doc["instances"]))
        if entry is None:
            left_out.append(str(cfg.get("name", "")))
            continue
        doc["instances"].append(entry)
    return {p: d for p, d in sorted(docs.items()) if d["instances"]}, left_out
