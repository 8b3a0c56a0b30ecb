"""Finding a HIP compiler for CK Tile device code, or setting one up from the package registries.

With ROCm installed (hipcc or amdclang++ on PATH, under $ROCM_PATH or /opt/rocm), that compiler builds every offload
arch. Without ROCm, `setup()` builds a toolchain from the registries alone, cached between runs, and installs
nothing on the system:

- PyPI: ziglang==0.17.0, whose `zig clang` is clang 22 and compiles every arch (gfx90a, gfx942, gfx950 and RDNA;
        `ckspace verify` found the same verdicts as Debian's clang-19 on gfx942 and gfx90a: docs/build.md), and
        amd-aiter==0.1.7.post2.dev18, which vendors CK Tile of about 2025-11 (the headers only are unpacked);
- apt, `apt-get download` only (unpacked into the toolchain directory, never installed): the HIP 5.2 headers
        (libamdhip64-dev), clang's HIP wrapper headers (libclang-common-19-dev; zig leaves them out), a sysroot of
        the C and C++ headers a HIP compile parses (libc6-dev, linux-libc-dev, libstdc++-12-dev, libgcc-12-dev).
        Headers only: no binary of Debian's is run, so no shared library of the system is needed (zig is static).

No device library is needed: objects are compiled device-only with `-nogpulib -fhip-emit-relocatable` (relocatable
device ELF objects; every template is instantiated and compiled). The 290 MB triton wheel (HIP 7.1 headers, ocml)
is not needed. CK CMake's ROCm-clang flag pair `-mllvm -amdgpu-early-inline-all=true -mllvm
-amdgpu-function-calls=false` is never passed to upstream clang (one file ran for more than 7 minutes with it).

The compiler is a wrapper script (bin/hipclang-zig) that acts like `clang -x hip`, defines the wavefront size of
the arch (64 on gfx9, 32 on RDNA: clang 22 no longer defines __AMDGCN_WAVEFRONT_SIZE, which the HIP 5.2 headers
read), splits a compile the way distcc needs (device-only preprocessed output, compiled back as HIP), and writes
the dependency files clang leaves out of a device-only compile.

The toolchain lives in $CKSPACE_TOOLCHAIN_DIR, else $XDG_CACHE_HOME/ckspace/toolchain-v4 (~/.cache/...). Setup is
idempotent (every step checks its result first), safe against concurrent runs (a lock file), and leaves
`toolchain.json` last, as the mark of a finished setup. `python3 -m ckspace.codegen.toolchain setup [DIR]` or
`scripts/setup_toolchain.sh [DIR]` run it by hand.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..errors import CkspaceError

RECIPE = "4"  # bump when the recipe changes: a new directory is set up next to the old one
ZIGLANG = "0.17.0"
AMD_AITER = "0.1.7.post2.dev18"
APT_HIP_HEADERS = "libamdhip64-dev"
APT_HIP_WRAPPERS = "libclang-common-19-dev"  # clang's __clang_hip_*.h, which zig's resource dir lacks
APT_SYSROOT = ("libc6-dev", "linux-libc-dev", "libstdc++-12-dev", "libgcc-12-dev")  # headers + crtbegin.o only
CK_IN_AITER = "aiter_meta/3rdparty/composable_kernel/include/"
# the archs the registry toolchain compiles (zig's clang 22, all of them); RDNA runs wave32
REGISTRY_ARCHS = ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1102",
                  "gfx1200", "gfx1201")
# clang writes a reproducer (the unit preprocessed, MBs) to /tmp whenever a compile dies, also when a stopped build
# kills it: not wanted from a build that stops its compilers on purpose
NO_CRASH_FILES = "-fno-crash-diagnostics"
# flags CK's CMake passes to ROCm clang; together they make upstream clang run for many minutes
FORBIDDEN_PAIR = ("-amdgpu-early-inline-all=true", "-amdgpu-function-calls=false")


# the rule family (toolchain-NAME) of each compiler: what `ckspace verify` found it cannot build
REGISTRY_FAMILIES = {"hipclang-zig": "clang22", "hipclang-19": "clang19"}


def family_of_command(cmd: Sequence[str]) -> str:
    """The NAME of the toolchain-NAME family of a compile command: the registry's wrappers by their name, else the
    compiler's file name (amdclang++ -> amdclangpp)."""
    name = Path(cmd[0]).name if cmd else ""
    return REGISTRY_FAMILIES.get(name) or name.replace("+", "p").replace("_", "-").lower() or "unknown"


def family_for(arch: str, compiler: str | None = None) -> str:
    """The family NAME of the compiler `build` would use for `arch`, found without setting anything up: --compiler,
    else ROCm (rocm), else the registry toolchain's compiler for the arch (set up or not: its recipe decides)."""
    if compiler:
        return family_of_command([compiler])
    if find_rocm() is not None:
        return "rocm"
    return registry_family(arch)


def registry_family(arch: str) -> str:
    """The family NAME of the registry toolchain's compiler for `arch` (as `setup` maps the archs)."""
    tc = registry_toolchain()
    if tc is not None:
        try:
            return family_of_command(tc.compiler_for(arch))
        except CkspaceError:
            pass
    return "clang22"


class ToolchainError(CkspaceError):
    """No compiler, and the registry toolchain cannot be set up (exit 2)."""


def default_dir() -> Path:
    override = os.environ.get("CKSPACE_TOOLCHAIN_DIR")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ckspace" / f"toolchain-v{RECIPE}"


@dataclass
class Toolchain:
    """How to compile CK Tile device code for each offload arch."""

    kind: str                                   # "rocm", "registry" or "custom"
    ck_include: Path | None                     # the directory holding ck_tile/ (None: none known)
    compilers: dict[str, list[str]] = field(default_factory=dict)   # arch -> command ("*" = any arch)
    extra_flags: dict[str, list[str]] = field(default_factory=dict)  # arch / "*" -> flags
    description: str = ""

    def compiler_for(self, arch: str) -> list[str]:
        base = arch.split(":")[0]
        cmd = self.compilers.get(base) or self.compilers.get("*")
        if not cmd:
            known = ", ".join(sorted(a for a in self.compilers if a != "*"))
            raise ToolchainError(f"the {self.kind} toolchain cannot build {arch} (it builds {known}); "
                                 "pass --compiler PATH to a HIP clang that knows it")
        return list(cmd)

    def flags_for(self, arch: str, ck_include: Path | None = None) -> list[str]:
        inc = ck_include or self.ck_include
        flags = ["-std=c++20", "-O3", f"--offload-arch={arch}", "--cuda-device-only", "-fhip-emit-relocatable",
                 "--no-gpu-bundle-output"]
        flags += self.extra_flags.get("*", []) + self.extra_flags.get(arch.split(":")[0], [])
        if inc:
            flags.append(f"-I{inc}")
        check_flags(flags, self.kind)
        return flags


def check_flags(flags: Sequence[str], kind: str) -> None:
    if kind != "rocm" and all(any(f.endswith(p) for f in flags) for p in FORBIDDEN_PAIR):
        raise ToolchainError("refusing -mllvm -amdgpu-early-inline-all=true with -mllvm -amdgpu-function-calls=false "
                             "for upstream clang (one CK file compiled for more than 7 minutes with the pair)")


# ---- ROCm ------------------------------------------------------------------------------------------------------
def find_rocm() -> Toolchain | None:
    """hipcc or amdclang++ of a ROCm install (PATH, $ROCM_PATH/bin, /opt/rocm/bin), or None."""
    roots = [os.environ.get("ROCM_PATH"), os.environ.get("HIP_PATH"), "/opt/rocm"]
    candidates: list[Path] = []
    for name in ("amdclang++", "hipcc"):
        found = shutil.which(name)
        if found:
            candidates.append(Path(found))
        for r in roots:
            if r:
                candidates.append(Path(r) / "bin" / name)
                candidates.append(Path(r) / "llvm" / "bin" / name)
    for c in candidates:
        if not (c.is_file() and os.access(c, os.X_OK)):
            continue
        if c.name == "hipcc" and _is_debian_hipcc(c):
            continue  # Debian's hipcc 5.2 hard-codes clang-15, which rejects gfx942
        root = c.resolve().parent.parent
        if root.name == "llvm":
            root = root.parent
        ck = root / "include"
        cmd = [str(c)] if c.name == "hipcc" else [str(c), "-x", "hip"]
        return Toolchain("rocm", ck if (ck / "ck_tile").is_dir() else None, {"*": cmd}, {},
                         f"ROCm {c}")
    return None


def _is_debian_hipcc(path: Path) -> bool:
    return str(path.resolve()).startswith("/usr/") and not Path("/opt/rocm").exists() and not os.environ.get("ROCM_PATH")


def custom(compiler: str, ck_include: Path | None) -> Toolchain:
    """A compiler given with --compiler: used for every arch, as `clang -x hip` unless it is hipcc."""
    path = shutil.which(compiler) or compiler
    if not (Path(path).is_file() and os.access(path, os.X_OK)):
        raise ToolchainError(f"--compiler {compiler}: no such executable")
    name = Path(path).name
    cmd = [path] if name.startswith("hipcc") or name.startswith("hipclang") else [path, "-x", "hip"]
    nogpulib = [] if _has_rocm_devlibs() else ["-nogpulib"]
    return Toolchain("custom", ck_include, {"*": cmd}, {"*": nogpulib}, f"--compiler {path}")


def _has_rocm_devlibs() -> bool:
    return any(Path(r, "amdgcn", "bitcode").is_dir() for r in ("/opt/rocm", os.environ.get("ROCM_PATH") or "/nonexistent"))


# ---- the registry toolchain --------------------------------------------------------------------------------------
def registry_toolchain(root: Path | None = None) -> Toolchain | None:
    """The registry toolchain if it is set up (toolchain.json present and its files there), else None."""
    root = Path(root or default_dir())
    try:
        info = json.loads((root / "toolchain.json").read_text())
    except (OSError, ValueError):
        return None
    if info.get("recipe") != RECIPE:
        return None
    compilers = {a: list(c) for a, c in info.get("compilers", {}).items()}
    if not all(Path(c[0]).is_file() for c in compilers.values()):
        return None
    return Toolchain("registry", Path(info["ck_include"]), compilers, {"*": ["-nogpulib"]},
                     f"registry toolchain in {root} (clang 22 of zig {ZIGLANG}; CK Tile from amd-aiter {AMD_AITER})")


def find(compiler: str | None = None, ck_include: str | Path | None = None, setup_ok: bool = True,
         log: Callable[[str], None] | None = None) -> Toolchain:
    """The compiler to use: --compiler, else ROCm, else the registry toolchain (set up now if need be)."""
    inc = Path(ck_include) if ck_include else None
    if compiler:
        own = custom(compiler, inc)
        if own.ck_include is None:
            own.ck_include = _ck_headers_for_custom(setup_ok, log)
        return own
    rocm = find_rocm()
    if rocm is not None:
        if inc:
            rocm.ck_include = inc
        if rocm.ck_include is None:
            rocm.ck_include = _ck_headers_for_custom(setup_ok, log)
        return rocm
    tc = registry_toolchain()
    if tc is None:
        if not setup_ok:
            raise ToolchainError("no ROCm and no registry toolchain; run scripts/setup_toolchain.sh")
        setup(log=log)
        tc = registry_toolchain()
        if tc is None:  # pragma: no cover
            raise ToolchainError("the registry toolchain setup finished without a usable toolchain.json")
    if inc:
        tc.ck_include = inc
    return tc


def _ck_headers_for_custom(setup_ok: bool, log) -> Path | None:
    tc = registry_toolchain()
    if tc is None and setup_ok:
        setup(log=log)
        tc = registry_toolchain()
    return tc.ck_include if tc else None


class _Lock:
    def __init__(self, path: Path):
        self.path = path
        self.fh = None

    def __enter__(self):
        import fcntl

        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fh = open(self.path, "a+")
        fcntl.flock(self.fh, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        import fcntl

        fcntl.flock(self.fh, fcntl.LOCK_UN)
        self.fh.close()


def _run(cmd: Sequence[str], log, cwd: Path | None = None, check: bool = True, env=None) -> subprocess.CompletedProcess:
    log("  $ " + " ".join(cmd))
    proc = subprocess.run(list(cmd), cwd=cwd, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise ToolchainError(f"`{' '.join(cmd)}` failed (exit {proc.returncode}): {' / '.join(tail)}")
    return proc


def _quiet(_msg: str) -> None:
    pass


def setup(root: str | Path | None = None, log: Callable[[str], None] | None = None) -> Path:
    """Set up the registry toolchain in `root` (default: the cache dir); idempotent; return `root`."""
    log = log or _quiet
    root = Path(root or default_dir()).absolute()
    root.mkdir(parents=True, exist_ok=True)
    with _Lock(root / ".lock"):
        if registry_toolchain(root) is not None:
            log(f"toolchain ready in {root}")
            return root
        log(f"setting up the registry toolchain in {root}")
        dl = root / "dl"
        dl.mkdir(exist_ok=True)
        hip = _ensure_hip_headers(root, dl, log)
        sysroot = _ensure_sysroot(root, dl, log)
        wheels = _ensure_wheels(dl, log)
        zig = _ensure_zig(root, wheels["ziglang"], dl, log)
        ck = _ensure_ck(root, wheels["amd-aiter"], log)
        bindir = root / "bin"
        bindir.mkdir(exist_ok=True)
        hip_path = hip.parent  # root/hip
        wzig = _wrapper(bindir / "hipclang-zig", [str(zig), "clang"],
                        ["--target=x86_64-unknown-linux-gnu", f"--sysroot={sysroot}", "-resource-dir",
                         str(root / "zres"), "--hip-path=" + str(hip_path), NO_CRASH_FILES], wave_size=True)
        compilers = {a: [str(wzig)] for a in REGISTRY_ARCHS}
        for arch in ("gfx942", "gfx950", "gfx1201"):
            _smoke_test([str(wzig)], arch, root, log)
        info = {
            "recipe": RECIPE,
            "ck_include": str(ck),
            "compilers": compilers,
            "sources": {"apt-get download (unpacked, not installed)": [APT_HIP_HEADERS, APT_HIP_WRAPPERS,
                                                                      *APT_SYSROOT],
                        "pypi": [f"ziglang=={ZIGLANG}", f"amd-aiter=={AMD_AITER}"]},
        }
        tmp = root / "toolchain.json.tmp"
        tmp.write_text(json.dumps(info, indent=1) + "\n")
        os.replace(tmp, root / "toolchain.json")
        log(f"toolchain ready in {root}")
        return root


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


APT_LOCK_WAIT = 300  # seconds apt-get waits for the dpkg lock held by another apt run


def _apt(args: Sequence[str], log, cwd: Path | None = None) -> None:
    """apt-get ARGS; on failure, `apt-get update` (as root) and once more."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    apt = ["apt-get", "-o", f"DPkg::Lock::Timeout={APT_LOCK_WAIT}"]  # wait for another apt run, do not fail at once
    proc = _run([*apt, *args], log, cwd=cwd, check=False, env=env)
    if proc.returncode == 0:
        return
    if _is_root():
        _run([*apt, "update", "-q"], log, check=False, env=env)
        _run([*apt, *args], log, cwd=cwd, env=env)
        return
    last = ((proc.stderr or proc.stdout or "").strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    raise ToolchainError(f"`apt-get {' '.join(args)}` failed: {last}")


def _fetch_deb(package: str, what: str, dl: Path, log) -> Path:
    """The package's .deb in the download cache dl, fetched with apt-get download (not installed) if missing. When
    the candidate cannot be downloaded (an installed version newer than the package lists hold), the versions the
    lists know are tried, newest first."""
    debs = sorted(dl.glob(f"{package}_*.deb"))
    if not debs:
        log(f"fetching {what} ({package}, apt-get download)")
        try:
            _apt(["download", package], log, cwd=dl)
        except ToolchainError:
            versions = _listed_versions(package)
            for version in versions:
                proc = _run(["apt-get", "download", f"{package}={version}"], log, cwd=dl, check=False)
                if proc.returncode == 0:
                    break
            else:
                raise
        debs = sorted(dl.glob(f"{package}_*.deb"))
        if not debs:
            raise ToolchainError(f"apt-get download {package} left no .deb in {dl}")
    return debs[-1]


def _listed_versions(package: str) -> list[str]:
    proc = subprocess.run(["apt-cache", "madison", package], capture_output=True, text=True)
    return [parts[1].strip() for parts in (line.split("|") for line in proc.stdout.splitlines()) if len(parts) >= 3]


def _unpack(deb: Path, dest: Path, log) -> None:
    _run(["dpkg-deb", "-x", str(deb), str(dest)], log)


def _ensure_sysroot(root: Path, dl: Path, log) -> Path:
    """The C and C++ headers a HIP compile parses (glibc, Linux, libstdc++ 12) and GCC 12's crtbegin.o (by which
    clang finds the GCC installation), from Debian's packages, unpacked: nothing depends on the system's headers."""
    sysroot = root / "sysroot"
    mark = sysroot / ".complete"
    if mark.is_file():
        return sysroot
    log("unpacking a sysroot of C/C++ headers (libc6-dev, linux-libc-dev, libstdc++-12-dev, libgcc-12-dev)")
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        for package in APT_SYSROOT:
            _unpack(_fetch_deb(package, f"headers ({package})", dl, log), Path(tmp), log)
        staged = Path(tmp)
        gcc = sorted((staged / "usr" / "lib" / "gcc" / "x86_64-linux-gnu").glob("*/crtbegin.o"))
        if not (staged / "usr" / "include" / "stdio.h").is_file() or not gcc:
            raise ToolchainError("the sysroot packages hold no usr/include/stdio.h or no GCC crtbegin.o")
        keep = Path(tmp + ".keep")
        (keep / "usr").mkdir(parents=True)
        shutil.move(str(staged / "usr" / "include"), str(keep / "usr" / "include"))
        for crt in gcc:  # the GCC dir: its include/ and the crt objects clang's detection looks for
            target = keep / crt.parent.relative_to(staged)
            target.mkdir(parents=True, exist_ok=True)
            for p in crt.parent.iterdir():
                if p.name == "include" or p.name.startswith("crt"):
                    shutil.move(str(p), str(target / p.name))
        if sysroot.exists():
            shutil.rmtree(sysroot)
        shutil.move(str(keep), str(sysroot))
    (sysroot / "usr" / "lib64").mkdir(exist_ok=True)
    mark.write_text("ok\n")
    return sysroot


def _ensure_hip_headers(root: Path, dl: Path, log) -> Path:
    """HIP 5.2 headers from Debian's libamdhip64-dev, unpacked (not installed); returns root/hip/include."""
    inc = root / "hip" / "include"
    if (inc / "hip" / "hip_runtime.h").is_file() and (root / "hip" / "bin" / ".hipVersion").is_file():
        return inc
    deb = _fetch_deb(APT_HIP_HEADERS, "the HIP headers", dl, log)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        _unpack(deb, Path(tmp), log)
        src = Path(tmp) / "usr" / "include" / "hip"
        if not (src / "hip_runtime.h").is_file():
            raise ToolchainError(f"{deb.name} holds no hip/hip_runtime.h")
        if inc.exists():
            shutil.rmtree(inc)
        inc.mkdir(parents=True)
        shutil.move(str(src), str(inc / "hip"))
    major, minor, patch = _hip_version(inc / "hip" / "hip_version.h")
    vdir = root / "hip" / "bin"
    vdir.mkdir(parents=True, exist_ok=True)
    # clang reads the HIP version from bin/.hipVersion (below 3.6 it would skip the HIP runtime wrapper)
    (vdir / ".hipVersion").write_text(f"HIP_VERSION_MAJOR={major}\nHIP_VERSION_MINOR={minor}\nHIP_VERSION_PATCH={patch}\n")
    return inc


def _hip_version(header: Path) -> tuple[str, str, str]:
    values = {}
    for line in header.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "#define" and parts[1] in ("HIP_VERSION_MAJOR", "HIP_VERSION_MINOR", "HIP_VERSION_PATCH"):
            values[parts[1]] = parts[2]
    return values.get("HIP_VERSION_MAJOR", "5"), values.get("HIP_VERSION_MINOR", "2"), values.get("HIP_VERSION_PATCH", "0")


def _ensure_wheels(dl: Path, log) -> dict[str, Path]:
    want = {"ziglang": (f"ziglang=={ZIGLANG}", f"ziglang-{ZIGLANG}-*.whl"),
            "amd-aiter": (f"amd-aiter=={AMD_AITER}", f"amd_aiter-{AMD_AITER}-*.whl")}
    missing = [spec for name, (spec, pat) in want.items() if not sorted(dl.glob(pat))]
    if missing:
        log(f"downloading {', '.join(missing)} (PyPI)")
        _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--pre", "--disable-pip-version-check",
              "-d", str(dl), *missing], log)
    out = {}
    for name, (spec, pat) in want.items():
        found = sorted(dl.glob(pat))
        if not found:
            raise ToolchainError(f"pip download {spec} left no wheel in {dl}")
        out[name] = found[-1]
    return out


def _extract(wheel: Path, prefix: str, dest: Path, strip: str) -> int:
    """Unpack the members of `wheel` under `prefix` into `dest`, dropping the leading `strip`; return the count."""
    n = 0
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            name = info.filename
            if not name.startswith(prefix) or name.endswith("/"):
                continue
            rel = name[len(strip):]
            if ".." in Path(rel).parts or rel.startswith("/"):
                continue
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(target, mode)
            n += 1
    return n


def _ensure_zig(root: Path, wheel: Path, dl: Path, log) -> Path:
    """zig's binary (its clang is clang 22) and a resource dir: zig's builtin headers + clang's HIP wrappers (from
    Debian's libclang-common-19-dev, unpacked)."""
    zig = root / "zig" / "zig"
    zres = root / "zres" / "include"
    if zig.is_file() and (zres / "__clang_hip_runtime_wrapper.h").is_file():
        return zig
    log(f"unpacking zig {ZIGLANG}")
    for d in (root / "zig", root / "zres"):
        if d.exists():
            shutil.rmtree(d)
    if _extract(wheel, "ziglang/zig", root / "zig", "ziglang/") != 1:
        raise ToolchainError(f"{wheel.name} holds no ziglang/zig")
    os.chmod(zig, 0o755)
    if _extract(wheel, "ziglang/lib/include/", zres, "ziglang/lib/include/") == 0:
        raise ToolchainError(f"{wheel.name} holds no ziglang/lib/include")
    deb = _fetch_deb(APT_HIP_WRAPPERS, "clang's HIP wrapper headers", dl, log)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        _unpack(deb, Path(tmp), log)
        found = sorted(Path(tmp).glob("usr/lib/llvm-*/lib/clang/*/include/__clang_hip_runtime_wrapper.h"))
        if not found:
            raise ToolchainError(f"{deb.name} holds no __clang_hip_runtime_wrapper.h")
        src = found[-1].parent
        for p in sorted(src.iterdir()):
            if p.name.startswith(("__clang_hip_", "__clang_cuda_")) or p.name == "cuda_wrappers":
                dest = zres / p.name
                if dest.exists():
                    continue
                if p.is_dir():
                    shutil.copytree(p, dest)
                else:
                    shutil.copy2(p, dest)
    return zig


def _ensure_ck(root: Path, wheel: Path, log) -> Path:
    ck = root / "ck"
    if (ck / "ck_tile" / "ops" / "grouped_convolution.hpp").is_file():
        return ck
    log(f"unpacking the CK Tile headers of amd-aiter {AMD_AITER}")
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        if _extract(wheel, CK_IN_AITER + "ck_tile/", Path(tmp), CK_IN_AITER) == 0:
            raise ToolchainError(f"{wheel.name} holds no {CK_IN_AITER}ck_tile")
        if ck.exists():
            shutil.rmtree(ck)
        shutil.move(tmp, str(ck))
        os.chmod(ck, 0o755)  # mkdtemp made it private; the cache is readable like the rest
        Path(tmp).mkdir()  # TemporaryDirectory cleans up the (now empty) path
    return ck


def _wrapper(path: Path, compiler: Sequence[str], flags: Sequence[str], wave_size: bool = False) -> Path:
    """A `clang -x hip` wrapper that also works under distcc and writes dependency files.

    - distcc splits a compile into a local preprocessing (`-E`) and a remote compile of the preprocessed `.ii`. A
      device-only compile preprocesses to plain device code (no host+device bundle), and the wrapper compiles a `.ii`
      input as `-x hip -nogpuinc` (the HIP headers are already in it), never as `hip-cpp-output`, which clang always
      sends through clang-offload-bundler (a tool of Debian's LLVM 19 that needs that LLVM's shared libraries).
    - Dependency files: clang writes none for a device-only compile (`-MD -MF F` are "unused"): the driver attaches
      dependency output to the host job alone. The wrapper hands `-MD`/`-MMD`, `-MF` and `-MT` to the compile itself
      (`-Xclang -dependency-file ...`), with the target `-MT` names, else `-o`'s; a preprocessed input has none.
    - Arguments after -o, -MF, -MT, -MQ, -include, -x, -I and -isystem are never taken for inputs. With `wave_size`,
      __AMDGCN_WAVEFRONT_SIZE is defined for the --offload-arch (32 on gfx10-12, else 64) unless the caller does.
    """
    q = " ".join(_sh(a) for a in compiler)
    f = " ".join(_sh(a) for a in flags)
    wave = ' ${wave:+"-D__AMDGCN_WAVEFRONT_SIZE=$wave"}' if wave_size else ""
    body = f"""#!/bin/sh
# Written by ckspace (ckspace/codegen/toolchain.py): HIP compiler wrapper of the registry toolchain.
pp=0
skip=
wave=64
userwave=0
dep=
depfile=
deptarget=
out=
for a in "$@"; do
  case "$skip" in
    o) out=$a; skip=; continue ;;
    MF) depfile=$a; skip=; continue ;;
    MT) deptarget=$a; skip=; continue ;;
    1) skip=; continue ;;
  esac
  case "$a" in
    -o) skip=o ;;
    -MF) skip=MF ;;
    -MT) skip=MT ;;
    -MQ|-include|-x|-I|-isystem) skip=1 ;;
    -MD) dep=sys ;;
    -MMD) dep=user ;;
    --offload-arch=gfx1*) wave=32 ;;
    -D__AMDGCN_WAVEFRONT_SIZE=*) userwave=1 ;;
    -*) ;;
    *.ii|*.i) pp=1 ;;
  esac
done
[ "$userwave" = 1 ] && wave=
[ -n "$deptarget" ] || deptarget=$out
[ -n "$depfile" ] || [ -z "$out" ] || depfile=${{out%.*}}.d
# The dependency options leave the arguments; for a source they come back as the compile's own.
n=$#
skip=0
for a in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  case "$a" in
    -MD|-MMD) continue ;;
    -MF|-MT) skip=1; continue ;;
  esac
  set -- "$@" "$a"
done
shift "$n"
if [ "$pp" = 1 ]; then
  exec {q} {f}{wave} -x hip -nogpuinc "$@"
fi
if [ -n "$dep" ] && [ -n "$deptarget" ] && [ -n "$depfile" ]; then
  set -- -Xclang -dependency-file -Xclang "$depfile" -Xclang -MT -Xclang "$deptarget" "$@"
  [ "$dep" = sys ] && set -- -Xclang -sys-header-deps "$@"
fi
exec {q} {f}{wave} -x hip "$@"
"""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(body)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)
    return path


def _sh(arg: str) -> str:
    import shlex

    return shlex.quote(arg)


def _smoke_test(cmd: Sequence[str], arch: str, root: Path, log) -> None:
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        src = Path(tmp) / "smoke.cpp"
        src.write_text("#include <hip/hip_runtime.h>\n"
                       "__global__ void ckspace_smoke(float* p) { p[threadIdx.x] = 1.0f; }\n"
                       "void ckspace_smoke_launch(float* p) { hipLaunchKernelGGL(ckspace_smoke, dim3(1), dim3(64), 0, 0, p); }\n")
        obj = Path(tmp) / "smoke.o"
        _run([*cmd, f"--offload-arch={arch}", "--cuda-device-only", "-fhip-emit-relocatable", "--no-gpu-bundle-output",
              "-nogpulib", "-O1", "-c", str(src), "-o", str(obj)], log)
        if not obj.is_file():
            raise ToolchainError(f"the {arch} compiler produced no object")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in ("setup", "show"):
        print("usage: python3 -m ckspace.codegen.toolchain setup [DIR] | show", file=sys.stderr)
        return 2
    try:
        if args[0] == "setup":
            root = setup(args[1] if len(args) > 1 else None, log=lambda m: print(m, file=sys.stderr))
            print(root)
            return 0
        tc = find(setup_ok=False)
        print(json.dumps({"kind": tc.kind, "ck_include": str(tc.ck_include), "compilers": tc.compilers,
                          "description": tc.description}, indent=1))
        return 0
    except CkspaceError as exc:
        print(f"ckspace: error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
