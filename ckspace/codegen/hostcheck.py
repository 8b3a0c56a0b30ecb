"""CK's own answer to "does this kernel run this problem": the host side of emitted units, compiled and called.

Each emitted unit exports `<kernel>_is_supported(conv_param, k_batch)`, which builds the kernel's arguments from a
`ck_tile::conv::ConvParam` and asks CK Tile's IsSupportedArgument (plus the launcher's own checks). Here the units
are compiled host-only (`--cuda-host-only`: x86-64 code, no GPU) with the build toolchain, next to a small harness
with C entry points, and linked into a shared library that Python loads with ctypes. Nothing reaches the GPU: the
HIP runtime calls the objects reference are stubbed (the ones run while the library loads register the device code
and do nothing; any other traps), and `is_supported` reaches none of them.

So the support rules (constraints/support.toml) can be checked against CK's code itself, problem by problem
(tests/test_support_host.py, scripts/audit_support.py).
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Sequence

from ..errors import CkspaceError
from .elf import read_elf

if TYPE_CHECKING:  # pragma: no cover
    from ..rules.problem import Problem
    from ..solve.kernels import KernelSpace

UNIT_KERNELS = 4  # kernels per compile unit: the headers cost most of a host compile (about 4 s a unit)
# The HIP runtime entry points a host object calls while it loads (its constructor registers the device code);
# every other HIP symbol it references is never reached by is_supported, and traps if it is.
RUN_AT_LOAD = {
    "__hipRegisterFatBinary": "void* __hipRegisterFatBinary(void* p) { static void* handle; (void)p; return &handle; }",
    "__hipRegisterFunction": "void __hipRegisterFunction(void) {}",
    "__hipRegisterVar": "void __hipRegisterVar(void) {}",
    "__hipUnregisterFatBinary": "void __hipUnregisterFatBinary(void) {}",
}
# What the C runtime would give a program but a shared library linked this way lacks (libc_nonshared.a's atexit:
# the fat binary's unregistration is never run, which is fine for a checker).
C_RUNTIME = "int atexit(void (*f)(void)) { (void)f; return 0; }"
SYSTEM_LIBS = ("libstdc++.so.6", "libm.so.6", "libgcc_s.so.1", "libc.so.6")
LIB_DIRS = ("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/lib")


class HostCheckError(CkspaceError):
    """The host library could not be built (a compile or link failed, or no linker)."""


@dataclass
class HostLibrary:
    """A built library: its path and the kernels it answers for, in its order."""

    path: Path
    names: list[str]

    def __post_init__(self) -> None:
        self._lib = ctypes.CDLL(str(self.path), mode=getattr(os, "RTLD_LAZY", 1) | getattr(os, "RTLD_LOCAL", 0))
        self._lib.ckspace_is_supported.restype = ctypes.c_int
        self._lib.ckspace_is_supported.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_long)]
        if self._lib.ckspace_kernels() != len(self.names):
            raise HostCheckError(f"{self.path}: it answers for {self._lib.ckspace_kernels()} kernels, not "
                                 f"{len(self.names)}")

    def supports(self, kernel: int | str, problem: "Problem") -> bool:
        """CK's verdict: does kernel (an index or a name) run the problem? A C++ exception is an error."""
        index = self.names.index(kernel) if isinstance(kernel, str) else kernel
        words = problem_words(problem)
        answer = self._lib.ckspace_is_supported(index, (ctypes.c_long * len(words))(*words))
        if answer < 0:
            raise HostCheckError(f"{self.names[index]}: is_supported threw for the problem {problem.text()}")
        return bool(answer)


def problem_words(problem: "Problem") -> list[int]:
    """The problem as the harness reads it: CK's ConvParam order, then k_batch."""
    p = problem
    return [p.ndim, p.g, p.n, p.k, p.c, *p.filter, *p.input, *p.stride, *p.dilation, *p.pad_left, *p.pad_right,
            p.k_batch]


def harness_source(names: Sequence[str]) -> str:
    """C entry points over the units' `ckspace::instances::<name>_is_supported`: ckspace_kernels() and
    ckspace_is_supported(kernel, words) with the words of problem_words (1 runs, 0 does not, -1 threw)."""
    decls = "\n".join(f"bool {n}_is_supported(const ck_tile::conv::ConvParam&, int);" for n in names)
    table = ",\n    ".join(f"&ckspace::instances::{n}_is_supported" for n in names)
    return f"""// Written by ckspace (ckspace/codegen/hostcheck.py): C entry points over the units' is_supported.
#include "ck_tile/core.hpp"
#include "ck_tile/host/convolution_parameter.hpp"
#include <vector>

namespace ckspace {{ namespace instances {{
{decls}
}} }}

using IsSupported = bool (*)(const ck_tile::conv::ConvParam&, int);
static const IsSupported kernels[] = {{
    {table}
}};

extern "C" int ckspace_kernels() {{ return static_cast<int>(sizeof(kernels) / sizeof(kernels[0])); }}

extern "C" int ckspace_is_supported(int kernel, const long* w) {{
    const int nd = static_cast<int>(w[0]);
    auto lengths = [&](int at) {{ return std::vector<ck_tile::long_index_t>(w + at, w + at + nd); }};
    try {{
        ck_tile::conv::ConvParam param(nd, w[1], w[2], w[3], w[4], lengths(5), lengths(5 + nd), lengths(5 + 2 * nd),
                                       lengths(5 + 3 * nd), lengths(5 + 4 * nd), lengths(5 + 5 * nd));
        return kernels[kernel](param, static_cast<int>(w[5 + 6 * nd])) ? 1 : 0;
    }} catch (...) {{
        return -1;
    }}
}}
"""


def stubs_source(undefined: Sequence[str]) -> str:
    """C definitions of the HIP symbols the objects reference: the load-time ones do nothing, the device code's
    fat binaries are empty, every other function traps."""
    out = ["// Written by ckspace (ckspace/codegen/hostcheck.py): the HIP runtime, as far as is_supported needs it.",
           C_RUNTIME]
    for sym in sorted(set(undefined)):
        if sym in RUN_AT_LOAD:
            out.append(RUN_AT_LOAD[sym])
        elif sym.startswith("__hip_fatbin"):
            out.append(f"char {sym}[64];")
        elif sym.startswith(("hip", "__hip")):
            out.append(f"void {sym}(void) {{ __builtin_trap(); }}")
    return "\n".join(out) + "\n"


def build(space: "KernelSpace", configs: Sequence[Mapping[str, object]], workdir: str | Path, *, revision: str,
          jobs: int | None = None, compiler: str | None = None, log=None) -> HostLibrary:
    """Emit the kernels (CK API `revision`) into workdir, compile their units and the harness host-only, and link
    them into workdir/host_check.so."""
    from .emit import emit
    from .toolchain import find

    work = Path(workdir)
    src = work / "src"
    names = [str(c["name"]) for c in configs]
    if len(set(names)) != len(names):
        raise HostCheckError("the kernels to check repeat a name")
    emit(space, [dict(c) for c in configs], src, revision=revision, chunk_size=UNIT_KERNELS)
    tc = find(compiler, setup_ok=True, log=log)
    cmd = tc.compiler_for(space.arch)
    flags = ["-std=c++20", "-O1", "--cuda-host-only", f"--offload-arch={space.arch}", "-fPIC", "-w"]
    if tc.ck_include:
        flags.append(f"-I{tc.ck_include}")
    (work / "harness.cpp").write_text(harness_source(names))
    sources = sorted((src / "units").glob("*.cpp")) + [work / "harness.cpp"]
    objs = [work / "obj" / f"{s.stem}.o" for s in sources]
    (work / "obj").mkdir(parents=True, exist_ok=True)

    def compile_one(pair: tuple[Path, Path]) -> None:
        source, obj = pair
        _run([*cmd, *flags, "-c", "-o", str(obj), str(source)], f"the host object of {source.name}")

    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as pool:
        list(pool.map(compile_one, zip(sources, objs)))
    undefined = [s.name for o in objs for s in read_elf(o).symbols if s.shndx == 0 and s.name]
    (work / "stubs.c").write_text(stubs_source(undefined))
    zig = _zig(cmd)
    stubs = work / "obj" / "stubs.o"
    c_compiler = [zig, "clang", "--target=x86_64-unknown-linux-gnu"] if zig else [shutil.which("cc") or "cc"]
    _run([*c_compiler, "-O1", "-fPIC", "-c", "-x", "c", "-o", str(stubs), str(work / "stubs.c")], "the HIP stubs")
    out = work / "host_check.so"
    linker = [zig, "ld.lld"] if zig else [shutil.which("ld.lld") or "ld"]
    _run([*linker, "-shared", "-o", str(out), *map(str, objs), str(stubs), *_system_libs()], "the host library")
    return HostLibrary(out, names)


def _zig(cmd: Sequence[str]) -> str | None:
    """The zig binary behind the registry toolchain's compiler wrapper (its clang and lld link the library)."""
    wrapper = Path(cmd[0])
    candidate = wrapper.parent.parent / "zig" / "zig"
    return str(candidate) if candidate.is_file() else shutil.which("zig")


def _system_libs() -> list[str]:
    """The C and C++ runtimes the library links against: the system's own (any Debian has them: apt is C++)."""
    out = []
    for lib in SYSTEM_LIBS:
        found = next((Path(d) / lib for d in LIB_DIRS if (Path(d) / lib).is_file()), None)
        if found is None:
            raise HostCheckError(f"no {lib} in {', '.join(LIB_DIRS)}: the host library cannot be linked")
        out.append(str(found))
    return out


def _run(cmd: Sequence[str], what: str) -> None:
    proc = subprocess.run(list(cmd), capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise HostCheckError(f"building {what} failed: {tail[0]}")
