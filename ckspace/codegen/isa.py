"""What a compiled unit holds, read from the AMDGPU assembly that clang writes (`-S`) and from the object assembled
from it: for each kernel entry point its resources (LDS, registers, scratch) and the matrix instructions of its code.

`ckspace verify` compiles every unit to assembly and assembles that into the object (ckspace/codegen/rusage.py
--isa): zig ships no disassembler and the machine may have no LLVM, but the assembly text has it all:

- the code, per function (`.type NAME,@function` ... `; -- End function`), from which the matrix instructions
  (`v_mfma*`, `v_smfmac*`, `v_wmma*`, `v_swmmac*`) are counted, with those of the functions of the file a kernel
  calls, and the symbols it calls that the file does not define (with `-nogpulib` the `__ockl_*` functions of the HIP
  headers stay calls: their registers are not in the counts, and the calls themselves cost SGPR spills);
- the kernel descriptor (`.amdhsa_kernel NAME` ... `.end_amdhsa_kernel`): `.amdhsa_group_segment_fixed_size` (LDS
  bytes) and `.amdhsa_private_segment_fixed_size` (scratch bytes per work-item) as numbers;
- the code object metadata (`.amdgpu_metadata`, the YAML form of the object's NT_AMDGPU_METADATA note), whose
  register counts are resolved numbers where the descriptor's are expressions of clang 20+ (`.amdhsa_next_free_vgpr
  max(totalnumvgprs(K.num_agpr, K.num_vgpr), 1, 0)`): `.vgpr_count` (on gfx90a and later the unified count, AGPRs
  included), `.agpr_count` (gfx90a and later), `.sgpr_count`, the spill counts, `.wavefront_size`.

The object's own descriptors (`NAME.kd`, 64 bytes: group segment size at offset 0, private segment size at 4) are
read as well and must agree with the text: an object that is not the assembled text (an older build) is no ISA.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence, cast

from ..errors import CkspaceError
from .elf import SHT_NOBITS, read_elf

MATRIX_PREFIXES = ("v_mfma", "v_smfmac", "v_wmma", "v_swmmac")  # MFMA (CDNA), sparse MFMA, WMMA (RDNA3+), sparse WMMA
KERNEL_ENTRY = "void ck_tile::kentry<"  # the demangled name of every CK Tile kernel entry point

_TYPE_FUNCTION = re.compile(r"\s*\.type\s+\"?([^\s\",]+)\"?\s*,\s*@function")
_LABEL = re.compile(r"^\"?([^\s\":;]+)\"?:")
_KERNEL = re.compile(r"\s*\.amdhsa_kernel\s+\"?([^\s\"]+)\"?")
_DIRECTIVE_NUMBER = re.compile(r"\s*\.amdhsa_(\w+)\s+(\d+)\s*$")
_SYMBOL_REF = re.compile(r"([A-Za-z_.$][\w.$]*)@(?:rel32|gotpcrel32|gotpcrel|abs32)")


@dataclass
class EntryPoint:
    """One kernel (a function with a kernel descriptor) of an assembly file."""

    symbol: str
    lds_bytes: int | None = None  # .amdhsa_group_segment_fixed_size
    scratch_bytes: int | None = None  # .amdhsa_private_segment_fixed_size (per work-item)
    vgprs: int | None = None  # metadata .vgpr_count (gfx90a+: AGPRs included)
    agprs: int | None = None  # metadata .agpr_count (gfx90a+ only)
    sgprs: int | None = None  # metadata .sgpr_count
    vgpr_spills: int | None = None
    sgpr_spills: int | None = None
    wavefront_size: int | None = None
    max_flat_workgroup_size: int | None = None  # metadata .max_flat_workgroup_size: the most threads a launch may have
    matrix: dict[str, int] = field(default_factory=dict)  # mnemonic -> count, its own code and its callees' in the file
    calls: list[str] = field(default_factory=list)  # called symbols the file does not define


@dataclass
class _Function:
    matrix: dict[str, int] = field(default_factory=dict)
    refs: set[str] = field(default_factory=set)


def parse_assembly(text: str) -> dict[str, EntryPoint]:
    """The kernel entry points of an AMDGPU assembly file (clang -S), by symbol (see the module doc)."""
    declared: set[str] = set()
    functions: dict[str, _Function] = {}
    descriptors: dict[str, dict[str, int]] = {}
    meta_lines: list[str] = []
    current: _Function | None = None
    kernel: dict[str, int] | None = None
    in_meta = False
    for line in text.splitlines():
        if in_meta:
            if line.strip() == ".end_amdgpu_metadata":
                in_meta = False
            else:
                meta_lines.append(line)
            continue
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("."):
            if kernel is not None:
                if stripped == ".end_amdhsa_kernel":
                    kernel = None
                else:
                    m = _DIRECTIVE_NUMBER.match(line)
                    if m:
                        kernel[m.group(1)] = int(m.group(2))
                continue
            m = _TYPE_FUNCTION.match(line)
            if m:
                declared.add(m.group(1))
                continue
            m = _KERNEL.match(line)
            if m:
                kernel = descriptors.setdefault(m.group(1), {})
                continue
            if stripped == ".amdgpu_metadata":
                in_meta = True
            continue
        if not line[0].isspace():
            if stripped.startswith(";"):
                if "-- End function" in stripped:
                    current = None
                continue
            m = _LABEL.match(line)
            if m and m.group(1) in declared:
                current = functions.setdefault(m.group(1), _Function())
            continue
        if stripped.startswith(";"):
            if "-- End function" in stripped:
                current = None
            continue
        if current is None:
            continue
        mnemonic = stripped.split(None, 1)[0]
        if mnemonic.startswith(MATRIX_PREFIXES):
            current.matrix[mnemonic] = current.matrix.get(mnemonic, 0) + 1
        if "@" in stripped:
            current.refs.update(_SYMBOL_REF.findall(stripped.split(";", 1)[0]))
    metadata = {str(k.get("name")): k for k in parse_metadata(meta_lines) if k.get("name")}
    out: dict[str, EntryPoint] = {}
    for symbol in list(dict.fromkeys([*descriptors, *metadata])):
        d, meta = descriptors.get(symbol, {}), metadata.get(symbol, {})
        matrix, calls = _reach(symbol, functions)
        out[symbol] = EntryPoint(
            symbol,
            lds_bytes=d.get("group_segment_fixed_size", _int(meta.get("group_segment_fixed_size"))),
            scratch_bytes=d.get("private_segment_fixed_size", _int(meta.get("private_segment_fixed_size"))),
            vgprs=_int(meta.get("vgpr_count")), agprs=_int(meta.get("agpr_count")), sgprs=_int(meta.get("sgpr_count")),
            vgpr_spills=_int(meta.get("vgpr_spill_count")), sgpr_spills=_int(meta.get("sgpr_spill_count")),
            wavefront_size=_int(meta.get("wavefront_size")),
            max_flat_workgroup_size=_int(meta.get("max_flat_workgroup_size")), matrix=matrix, calls=calls)
    return out


def _reach(symbol: str, functions: Mapping[str, _Function]) -> tuple[dict[str, int], list[str]]:
    """The matrix instructions of a function and of every function of the file it calls (transitively), and the
    symbols it calls that the file does not define."""
    matrix: dict[str, int] = {}
    external: set[str] = set()
    seen = {symbol}
    todo = [symbol]
    while todo:
        fn = functions.get(todo.pop())
        if fn is None:
            continue
        for mnemonic, n in fn.matrix.items():
            matrix[mnemonic] = matrix.get(mnemonic, 0) + n
        for ref in fn.refs:
            if ref in functions:
                if ref not in seen:
                    seen.add(ref)
                    todo.append(ref)
            elif not ref.startswith(".L"):
                external.add(ref)
    return dict(sorted(matrix.items())), sorted(external)


def parse_metadata(lines: Iterable[str]) -> list[dict[str, object]]:
    """The kernels of the code object metadata's YAML (`amdhsa.kernels:`): each kernel's scalar keys, without their
    leading dot (`.vgpr_count: 64` -> {"vgpr_count": 64}); nested lists (`.args`) are skipped."""
    kernels: list[dict[str, object]] = []
    current: dict[str, object] | None = None
    inside = False
    for line in lines:
        if line and not line[0].isspace() and not line.startswith("-"):
            inside = line.startswith("amdhsa.kernels:")
            current = None
            continue
        if not inside:
            continue
        if line.startswith("  - "):
            current = {}
            kernels.append(current)
            body = line[4:]
        elif line.startswith("    ") and not line.startswith("     ") and current is not None:
            body = line[4:]
        else:
            continue
        if body.startswith(".") and ":" in body:
            key, _, value = body.partition(":")
            value = value.strip()
            if value:
                current[key[1:]] = _scalar(value)
    return kernels


def _scalar(text: str) -> object:
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    if text in ("true", "false"):
        return text == "true"
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# ---- the object's kernel descriptors -----------------------------------------------------------------------------
def read_descriptors(path: str | Path) -> dict[str, tuple[int, int]]:
    """Each kernel descriptor (`NAME.kd`) of a 64-bit little-endian ELF object: NAME -> (group segment fixed size,
    private segment fixed size), the first two words of the descriptor."""
    elf = read_elf(path)
    try:
        return {sym.name[:-3]: cast("tuple[int, int]", elf.words_at(sym, 2)) for sym in elf.symbols
                if sym.name.endswith(".kd") and 0 < sym.shndx < len(elf.sections)
                and elf.sections[sym.shndx].type != SHT_NOBITS}
    except struct.error as exc:
        raise CkspaceError(f"{path}: a malformed ELF object ({exc})") from None


# ---- per kernel of a unit ----------------------------------------------------------------------------------------
def summarize(entries: Sequence[EntryPoint]) -> dict[str, object]:
    """A kernel's ISA over its entry points (CK Tile's launcher instantiates one per hot loop, tail number and memory
    operation): the largest of each resource, the matrix instructions of all of them, the external calls."""

    def most(attr: str) -> int | None:
        values = [getattr(e, attr) for e in entries if getattr(e, attr) is not None]
        return max(values) if values else None

    def least(attr: str) -> int | None:
        values = [getattr(e, attr) for e in entries if getattr(e, attr) is not None]
        return min(values) if values else None

    matrix: dict[str, int] = {}
    for e in entries:
        for mnemonic, n in e.matrix.items():
            matrix[mnemonic] = matrix.get(mnemonic, 0) + n
    return {
        "entry_points": len(entries),
        "lds_bytes": most("lds_bytes"), "vgprs": most("vgprs"), "agprs": most("agprs"), "sgprs": most("sgprs"),
        "scratch_bytes": most("scratch_bytes"), "vgpr_spills": most("vgpr_spills"), "sgpr_spills": most("sgpr_spills"),
        "wavefront_size": most("wavefront_size"), "max_flat_workgroup_size": least("max_flat_workgroup_size"),
        "matrix_instructions": sum(matrix.values()), "matrix_mnemonics": dict(sorted(matrix.items())),
        "external_calls": sorted({c for e in entries for c in e.calls}),
    }


def read_unit(asm: Path, obj: Path, kernels: Mapping[str, Mapping[str, object]]
              ) -> dict[str, tuple[dict[str, object] | None, str]]:
    """Each kernel of a compiled unit (name -> fields, as the manifest has them): (its ISA summary, "") or (None,
    why it could not be read). The entry points are attributed to the kernels by their demangled names, as the
    build's object check does (build.kernel_entry_points); a unit of one kernel whose name matches none gets every
    CK Tile entry point of the unit."""
    from . import build as B

    def everyone(why: str) -> dict[str, tuple[dict[str, object] | None, str]]:
        return {n: (None, why) for n in kernels}

    try:
        entries = parse_assembly(asm.read_text(errors="replace"))
    except OSError as exc:
        return everyone(f"no assembly of the unit ({asm.name}: {exc.strerror or exc})")
    if not entries:
        return everyone(f"the assembly of the unit ({asm.name}) holds no kernel")
    try:
        descriptors = read_descriptors(obj)
    except (OSError, CkspaceError) as exc:
        return everyone(f"the object {obj.name} cannot be read: {getattr(exc, 'strerror', None) or exc}")
    for e in entries.values():
        got = descriptors.get(e.symbol)
        if got is None or got != (e.lds_bytes, e.scratch_bytes):
            return everyone(f"the object {obj.name} is not the assembly's: kernel descriptor of {e.symbol[:60]}… is "
                            f"{'missing' if got is None else f'LDS {got[0]}, scratch {got[1]}'}, the assembly says "
                            f"LDS {e.lds_bytes}, scratch {e.scratch_bytes}")
    symbols = list(entries)
    try:
        found = B.kernel_entry_points(kernels, symbols)
    except (KeyError, TypeError):  # fields the signature needs are missing: no name is matched
        found = {}
    if len(kernels) == 1:
        (name,) = kernels
        if not found.get(name):
            demangled = B.demangle(symbols)
            found[name] = [s for s in symbols if demangled[s].startswith(KERNEL_ENTRY)]
    out: dict[str, tuple[dict[str, object] | None, str]] = {}
    for name in kernels:
        mine = [entries[s] for s in found.get(name, [])]
        out[name] = (summarize(mine), "") if mine else (None, "no entry point of it in the unit's assembly")
    return out


def has_matrix(summary: Mapping[str, object]) -> bool:
    return bool(summary.get("matrix_instructions"))
