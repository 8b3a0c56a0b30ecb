"""`ckspace build`: ninja over an emitted directory with a real compiler, and the checks of its objects.

The compile tests need the registry toolchain (ckspace.codegen.toolchain, set up through ckspace itself and cached). In CI
(env CI set, or root with apt-get, as on CI's fresh Debian) they must run: a toolchain that cannot be set up fails
them. Elsewhere they skip, with the reason. `test_tiny_kernels_compile_for_gfx942_and_gfx950` is CI's compile test:
a kernel of `tiny` per variant (CK API 2025.11), one compile unit per arch, gfx942 and gfx950 built in parallel; it
also checks Ctrl-C, resuming and incremental rebuilds (the whole of tiny, on five archs: tests/test_tiny_builds.py).
The launcher tests compile a one-line kernel (cheap) through a pass-through ccache/sccache and through distcc on
localhost. Everything else here runs without a compiler.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ckspace.codegen import archdetect
from ckspace.codegen import build as B
from ckspace.codegen import toolchain as T
from ckspace.errors import UsageError

REPO = Path(__file__).resolve().parent.parent
# EF_AMDGPU_MACH (e_flags & 0xff) of the targets, from LLVM's AMDGPUUsage "AMDGPU ELF Header" table; EM_AMDGPU = 224
EM_AMDGPU = 224
EF_MACH = {"gfx942": 0x04C, "gfx950": 0x04F}


def cli(args: list[str], env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ckspace", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=REPO, **kw)


def cli_popen(args: list[str], env: dict | None = None) -> subprocess.Popen:
    # a session of its own: the SIGINT below goes to ckspace, ninja and the compilers, as a terminal's Ctrl-C does
    return subprocess.Popen([sys.executable, "-m", "ckspace", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **(env or {})}, cwd=REPO, start_new_session=True)


# ---- without a compiler ---------------------------------------------------------------------------------------------
MANIFEST = {"units": {"units/grouped_conv_instances_0000.cpp": ["grouped_conv_fwd_a", "grouped_conv_fwd_b"],
                      "units/grouped_conv_instances_0001.cpp": ["grouped_conv_bwd_data_c"]}}


def test_parse_failures_maps_errors_to_kernels():
    out = [
        "@@ckspace 0 2 2] gfx942 grouped_conv_instances_0000",
        "FAILED: obj/gfx942/grouped_conv_instances_0000.o ",
        "/x/hipclang-19 ... -c units/grouped_conv_instances_0000.cpp -o obj/gfx942/grouped_conv_instances_0000.o.tmp",
        "In file included from units/grouped_conv_instances_0000.cpp:9:",
        "units/../grouped_conv_fwd_b.hpp:12:10: fatal error: 'nope.hpp' file not found",
        "1 error generated when compiling for gfx942.",
        "FAILED: obj/gfx942/grouped_conv_instances_0001.o ",
        "clang: error: unable to execute command",
        "ninja: build stopped: subcommands failed.",
    ]
    f = B.parse_failures(out, MANIFEST)
    assert [(x.unit, x.arch) for x in f] == [("units/grouped_conv_instances_0000.cpp", "gfx942"),
                                            ("units/grouped_conv_instances_0001.cpp", "gfx942")]
    assert f[0].kernels == ["grouped_conv_fwd_b"]  # the kernel whose header the error points into
    assert "fatal error: 'nope.hpp' file not found" in f[0].error
    assert f[1].kernels == ["grouped_conv_bwd_data_c"] and "unable to execute" in f[1].error


def test_a_failure_inside_ck_tile_names_the_kernel_that_instantiated_it():
    # CK Tile's headers are included once, through the unit's first kernel header: the include chain names kernel a,
    # but the instantiation note is located in kernel b's header, which is the kernel that failed (issue 13).
    names = ["grouped_conv_fwd_a", "grouped_conv_bwd_weight_b", "grouped_conv_fwd_c"]
    block = [
        "In file included from units/grouped_conv_instances_0000.cpp:9:",
        "In file included from units/../grouped_conv_fwd_a.hpp:3:",
        "/ck/ck_tile/ops/gemm/transpose_tile.hpp:88:5: error: invalid operands to binary expression",
        "units/../grouped_conv_bwd_weight_b.hpp:41:18: note: in instantiation of function template specialization "
        "'ck_tile::GroupedConvolutionBackwardWeightKernel<...>::operator()' requested here",
        "1 error generated when compiling for gfx942.",
    ]
    assert B.culprits(block, names) == ["grouped_conv_bwd_weight_b"]
    # an error located in a kernel header names that kernel; no location at all falls back to the headers mentioned
    assert B.culprits(["units/../grouped_conv_fwd_c.hpp:7:1: error: unknown type name 'x'"], names) == ["grouped_conv_fwd_c"]
    assert B.culprits(["In file included from units/../grouped_conv_fwd_a.hpp:3:", "clang: error: crash"], names) == [
        "grouped_conv_fwd_a"]
    assert B.culprits(["clang: error: unable to execute command"], names) == names


def test_flags_never_carry_the_rocm_pair():
    tc = T.Toolchain("registry", Path("/ck"), {"gfx942": ["cc"]}, {"*": ["-nogpulib"]})
    flags = tc.flags_for("gfx942")
    assert "-fhip-emit-relocatable" in flags and "--cuda-device-only" in flags and "-I/ck" in flags
    assert not any("amdgpu-early-inline-all" in f or "amdgpu-function-calls" in f for f in flags)
    tc.extra_flags["*"] += ["-mllvm", "-amdgpu-early-inline-all=true", "-mllvm", "-amdgpu-function-calls=false"]
    with pytest.raises(T.ToolchainError, match="7 minutes"):
        tc.flags_for("gfx942")
    with pytest.raises(T.ToolchainError, match="cannot build gfx1250"):
        tc.compiler_for("gfx1250")


def test_toolchain_ninja():
    tc = T.Toolchain("registry", Path("/ck dir"), {"gfx942": ["/t/hipclang-19"], "gfx950": ["/t/hipclang-zig"]},
                     {"*": ["-nogpulib"]}, "test toolchain")
    text = B.render_toolchain_ninja(tc, ["gfx942", "gfx950"], ["/usr/bin/ccache"], None)
    assert "ccache" not in text  # the launcher comes from $CKSPACE_LAUNCHER: changing it rebuilds nothing
    assert "cxx_gfx950 = /t/hipclang-zig" in text
    assert "--offload-arch=gfx942" in text and "'-I/ck dir'" in text


def test_launchers():
    assert B.resolve_launcher(None) == []
    with pytest.raises(UsageError, match="unknown launcher"):
        B.resolve_launcher("icecc-nope")
    if not shutil.which("sccache"):
        with pytest.raises(UsageError, match="not found"):
            B.resolve_launcher("sccache")


def _fake_wrapper(tmp_path: Path):
    """The registry wrapper around a stand-in compiler that prints its arguments, one per line."""
    fake = tmp_path / "fakecc"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    fake.chmod(0o755)
    w = T._wrapper(tmp_path / "hipclang-test", [str(fake)], ["--hip-path=/h"], wave_size=True)

    def args(*a: str) -> list[str]:
        return subprocess.run([str(w), *a], capture_output=True, text=True, check=True).stdout.splitlines()
    return args


def _after(argv: list[str], flag: str) -> list[str]:
    """The values that follow each occurrence of `flag`."""
    return [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == flag]


def test_wrapper_splits_for_distcc(tmp_path):
    """distcc's split: the local -E stays device-only (plain device code, no host+device bundle), and the remote
    compile of the .ii is HIP again with no GPU includes: nothing asks for clang-offload-bundler."""
    args = _fake_wrapper(tmp_path)
    compile_ = args("--cuda-device-only", "-fhip-emit-relocatable", "-c", "u.cpp", "-o", "u.o")
    assert _after(compile_, "-x") == ["hip"] and "--cuda-device-only" in compile_
    pre = args("--cuda-device-only", "--offload-arch=gfx942", "-E", "u.cpp")
    assert "--cuda-device-only" in pre and "-E" in pre and _after(pre, "-x") == ["hip"]
    remote = args("--cuda-device-only", "--offload-arch=gfx942", "-c", "distcc_1.ii", "-o", "u.o")
    assert _after(remote, "-x") == ["hip"] and "-nogpuinc" in remote
    assert not any(a.startswith("-B") for a in remote + compile_)  # no tool directory: no bundler to find
    assert "hip-cpp-output" not in remote


def test_wrapper_writes_dependencies_of_a_device_only_compile(tmp_path):
    """clang attaches -MD/-MF to the host job only; the wrapper hands them to the device compile as cc1 options."""
    args = _fake_wrapper(tmp_path)
    argv = args("--offload-arch=gfx942", "--cuda-device-only", "-MD", "-MF", "obj/u.o.d", "-MT", "obj/u.o", "-c",
                "u.cpp", "-o", "obj/u.o.tmp")
    assert "-MD" not in argv and "-MF" not in argv
    assert all(argv[i - 1] == "-Xclang" for i, a in enumerate(argv) if a == "-MT")  # only as the compile's own
    xclang = _after(argv, "-Xclang")
    assert xclang == ["-sys-header-deps", "-dependency-file", "obj/u.o.d", "-MT", "obj/u.o"], argv
    assert _after(argv, "-o") == ["obj/u.o.tmp"] and "u.cpp" in argv
    # -MMD leaves out the system headers; without -MT the target is -o's, without -MF the .d beside it
    argv = args("--offload-arch=gfx1201", "-MMD", "-c", "u.cpp", "-o", "obj/u.o")
    assert _after(argv, "-Xclang") == ["-dependency-file", "obj/u.d", "-MT", "obj/u.o"], argv
    assert "-D__AMDGCN_WAVEFRONT_SIZE=32" in argv
    # a preprocessed input (distcc's remote compile) has no dependencies to write
    argv = args("--offload-arch=gfx942", "-MD", "-MF", "u.d", "-c", "distcc_2.ii", "-o", "u.o")
    assert "-Xclang" not in argv and "-MD" not in argv and "u.d" not in argv
    # no dependency option: none added
    assert "-Xclang" not in args("--offload-arch=gfx942", "-c", "u.cpp", "-o", "u.o")


def test_demangle():
    d = B.demangle(["_ZN7ck_tile6kentryILi2EiJiEEEvDpT1_"])
    assert d["_ZN7ck_tile6kentryILi2EiJiEEEvDpT1_"].startswith("void ck_tile::kentry<2, int, int>(")


class _Err:
    def __init__(self, value):
        self.value = value
        self.name = f"hipError{value}"


def _fake_hip(count: int, arch: bytes):
    class Props:
        gcnArchName = arch

    class Hip:
        @staticmethod
        def hipGetDeviceCount():
            return (_Err(0 if count >= 0 else 100), max(count, 0))

        hipDeviceProp_t = Props

        @staticmethod
        def hipGetDeviceProperties(props, device):
            return (_Err(0),)

    mod = type(sys)("hip")
    mod.hip = Hip
    return mod


def test_arch_auto(monkeypatch):
    monkeypatch.setitem(sys.modules, "hip", _fake_hip(1, b"gfx942:sramecc+:xnack-"))
    assert archdetect.resolve("auto") == "gfx942"
    assert archdetect.resolve("gfx950") == "gfx950"
    monkeypatch.setitem(sys.modules, "hip", _fake_hip(0, b""))
    with pytest.raises(UsageError, match="no AMD GPU.*--arch"):
        archdetect.detect()
    monkeypatch.setitem(sys.modules, "hip", _fake_hip(-1, b""))
    with pytest.raises(UsageError, match="--arch"):
        archdetect.detect()
    monkeypatch.setitem(sys.modules, "hip", None)
    with pytest.raises(UsageError, match="hip-python.*--arch"):
        archdetect.detect()
    # hip-python installed, no ROCm: it raises on first use (the text of hip-python 7.2 on this machine)
    nort = _fake_hip(1, b"")

    def no_runtime():
        raise RuntimeError("failed to dlopen 'b'libamdhip64.so'': b'libamdhip64.so: cannot open shared object file'")

    nort.hip.hipGetDeviceCount = staticmethod(no_runtime)
    monkeypatch.setitem(sys.modules, "hip", nort)
    with pytest.raises(UsageError, match="no ROCm runtime.*pass --arch"):
        archdetect.detect()


def test_build_needs_an_emitted_dir(tmp_path):
    r = cli(["build", str(tmp_path)])
    assert r.returncode == 2 and "ckspace emit" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = cli(["build", str(tmp_path / "missing")])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


def test_build_refuses_other_revision_headers(tmp_path):
    out = tmp_path / "o"
    r = cli(["emit", "--arch", "gfx950", "--variant", "forward_depthwise", "-o", str(out)])
    assert r.returncode == 0, r.stderr
    old = tmp_path / "ck"
    for rel, text in {
        "ck_tile/ops/grouped_convolution/utils/grouped_convolution_utils.hpp": "EnableSplitImage_ = false>",
        "ck_tile/ops/gemm/pipeline/gemm_pipeline_problem.hpp": "HasHotLoop_ TailNum_",
        "ck_tile/ops/epilogue/cshuffle_epilogue.hpp": "MemoryOperation_",
    }.items():
        (old / rel).parent.mkdir(parents=True, exist_ok=True)
        (old / rel).write_text(text)
    r = cli(["build", str(out), "--compiler", sys.executable, "--ck-include", str(old)])
    assert r.returncode == 2 and "--ck-api 2025.11" in r.stderr, r.stderr
    r = cli(["build", str(out), "--offload-arch", "gfx950,bogus", "--compiler", sys.executable])
    assert r.returncode == 2 and "unknown arch 'bogus'" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_build_refuses_an_arch_the_kernels_are_invalid_on(tmp_path, capsys):
    # gfx950's tiny set compiled for gfx1201: the model says in a second which kernels gfx1201 cannot build (its only
    # warp GEMM with matrix instructions is fp16/bf16 16x16x16 WMMA: constraints/archs/gfx1201.toml, rule
    # arch.warp-tile), one line each, exit 2, before any toolchain is set up or anything compiled.
    from ckspace.cli import main
    from ckspace.rules.names import parse_name

    out = tmp_path / "tiny"
    assert main(["emit", "--arch", "gfx950", "--set", "tiny", "-o", str(out)]) == 0
    names = json.loads((out / "manifest.json").read_text())["kernels"]
    gemm = {n: parse_name(n) for n in names if parse_name(n)["variant"] != "forward_depthwise"}
    expected = sorted(n for n, c in gemm.items()
                      if c["dtype"] == "fp32" or (c["warp_tile_m"], c["warp_tile_n"], c["warp_tile_k"]) != (16, 16, 16))
    capsys.readouterr()
    assert main(["build", str(out), "--offload-arch", "gfx1201"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    named = sorted(line.split()[2] for line in err[:-1])
    assert expected and set(expected) <= set(named)  # every kernel without a WMMA tile (others may break more)
    assert all(" is not valid on gfx1201: " in line for line in err[:-1])
    assert "not valid on gfx1201" in err[-1] and "--force" in err[-1]
    assert not list(out.glob("**/*.o"))


def test_a_deb_whose_candidate_cannot_be_fetched_comes_in_a_listed_version(tmp_path, monkeypatch):
    """The registry toolchain only downloads .debs (never installs one): when the candidate cannot be fetched (an
    installed version newer than the package lists), a version the lists hold is fetched instead."""
    calls: list[list[str]] = []

    def apt(args, log, cwd=None):
        calls.append(list(args))
        raise T.ToolchainError("`apt-get download linux-libc-dev` failed: E: Can't find a source to download version")

    def run(cmd, log, cwd=None, check=True, env=None):
        calls.append(list(cmd))
        ok = cmd[-1] == "linux-libc-dev=6.1.176-1"
        if ok:
            (cwd / "linux-libc-dev_6.1.176-1_amd64.deb").write_bytes(b"")
        return subprocess.CompletedProcess(cmd, 0 if ok else 100, "", "")

    monkeypatch.setattr(T, "_apt", apt)
    monkeypatch.setattr(T, "_run", run)
    monkeypatch.setattr(T, "_listed_versions", lambda package: ["6.1.192-2", "6.1.176-1"])
    deb = T._fetch_deb("linux-libc-dev", "headers", tmp_path, lambda m: None)
    assert deb.name == "linux-libc-dev_6.1.176-1_amd64.deb"
    assert calls[-1][-1] == "linux-libc-dev=6.1.176-1" and not any("install" in c for c in calls)


@pytest.mark.compile
def test_the_registry_toolchain_is_clang22_for_every_arch_and_installs_nothing(monkeypatch):
    _toolchain(monkeypatch)
    root = Path(os.environ["CKSPACE_TOOLCHAIN_DIR"])
    info = json.loads((root / "toolchain.json").read_text())
    assert {Path(c[0]).name for c in info["compilers"].values()} == {"hipclang-zig"}
    assert {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"} <= set(info["compilers"])
    assert not any("install" in k and "not installed" not in k for k in info["sources"])
    # the wrapper defines the wavefront size of the arch (clang 22 no longer does; HIP 5.2's warpSize reads it)
    wrapper = info["compilers"]["gfx942"][0]
    for arch, wave in (("gfx942", 64), ("gfx950", 64), ("gfx1201", 32), ("gfx1100", 32)):
        src = root / f"wave-{arch}.hip"
        src.write_text(f"#if __AMDGCN_WAVEFRONT_SIZE != {wave}\n#error wave\n#endif\n")
        r = subprocess.run([wrapper, f"--offload-arch={arch}", "--cuda-device-only", "-nogpulib", "-fsyntax-only",
                            str(src)], capture_output=True, text=True)
        src.unlink()
        assert r.returncode == 0, (arch, r.stderr[-500:])


def test_arch_auto_without_a_gpu_here():
    """The real case on this machine: no hip-python / ROCm runtime / AMD GPU -> one line asking for --arch, exit 2."""
    try:
        archdetect.detect()
    except UsageError:
        pass
    else:
        pytest.skip("this machine has an AMD GPU visible to hip-python")
    r = cli(["enumerate", "--arch", "auto", "--count"])
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "--arch auto" in r.stderr and "pass --arch" in r.stderr and "Traceback" not in r.stderr


# ---- with the registry toolchain ------------------------------------------------------------------------------------
def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _in_ci() -> bool:
    """CI: env CI set, or root with apt-get (CI's fresh Debian); there the toolchain must be set up, not skipped."""
    return bool(os.environ.get("CI")) or (_is_root() and shutil.which("apt-get") is not None)


def _toolchain_dir() -> Path:
    """The toolchain's cache dir ($CKSPACE_TOOLCHAIN_DIR, else $XDG_CACHE_HOME/ckspace/...). As root with neither
    set (CI), a world-readable one in /var/tmp, so that distccd (which will not run as root) can run the compilers;
    the README says so."""
    if _is_root() and not os.environ.get("CKSPACE_TOOLCHAIN_DIR") and not os.environ.get("XDG_CACHE_HOME"):
        return Path("/var/tmp") / f"ckspace-toolchain-v{T.RECIPE}"
    return T.default_dir()


def _readable_by_all(path: Path) -> bool:
    """Whether another user (distccd's) can reach and read `path`: o+x on every directory above it, o+r on it."""
    path = path.resolve()
    try:
        if not path.stat().st_mode & 0o004:
            return False
        return all(p.stat().st_mode & 0o001 for p in path.parents)
    except OSError:
        return False


def _toolchain(monkeypatch) -> float:
    """Set up (or find, cached) the registry toolchain for this process and the CLI runs; the seconds it took."""
    tc_dir = _toolchain_dir()
    monkeypatch.setenv("CKSPACE_TOOLCHAIN_DIR", str(tc_dir))
    t0 = time.perf_counter()
    try:
        T.setup(tc_dir)
    except T.ToolchainError as exc:
        if _in_ci():
            raise
        pytest.skip(f"the registry toolchain cannot be set up here (not CI, so skipped): {exc}")
    return time.perf_counter() - t0


def _elf_header(path: Path) -> tuple[int, int]:
    """(e_machine, e_flags) of a 64-bit little-endian ELF file, read here independently of ckspace.codegen.build."""
    import struct

    data = path.read_bytes()[:64]
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, path
    return struct.unpack_from("<H", data, 18)[0], struct.unpack_from("<I", data, 48)[0]


def _kernel_entry_points(path: Path) -> list[str]:
    """The demangled names of the kernels (symbols with a kernel descriptor, `NAME.kd`), through binutils."""
    nm = subprocess.run(["nm", str(path)], capture_output=True, text=True, check=True).stdout
    names = [line.split()[-1][:-3] for line in nm.splitlines() if line.endswith(".kd")]
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


VARIANT_CLASS = {"forward": "GroupedConvolutionForwardKernel", "bwd_data": "GroupedConvolutionBackwardDataKernel",
                 "bwd_weight": "GroupedConvolutionBackwardWeightKernel"}


def _expected_fragments(f: dict) -> list[str]:
    """What the entry point of a kernel with fields `f` must name: its kernel class and ndim, its tile shape."""
    return [f"ck_tile::{VARIANT_CLASS[f['variant']]}<ck_tile::GroupedConvTraits<{f['ndim']}, ",
            f"ck_tile::TileGemmShape<ck_tile::sequence<{f['tile_m']}, {f['tile_n']}, {f['tile_k']}>, "
            f"ck_tile::sequence<{f['wave_m']}, {f['wave_n']}, {f['wave_k']}>, "
            f"ck_tile::sequence<{f['warp_tile_m']}, {f['warp_tile_n']}, {f['warp_tile_k']}>"]


def _mtimes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in (root / "obj").rglob("*.o")}


def _tiny_names(arch: str, tmp: Path) -> Path:
    """A file naming one kernel of `tiny` per variant (bwd_weight: a two-stage one, whose second kernel compiles too),
    each its variant's least tile volume: every kernel class of tiny compiles, in less than half the time of the
    whole set (142 s against 323 s here, both archs in parallel). constraints/evidence/tiny-builds.json holds the
    compiler's verdict on all of tiny, on five archs (scripts/record_tiny_builds.py; tests/test_tiny_builds.py fails
    while it is stale)."""
    r = cli(["emit", "--arch", arch, "--set", "tiny", "--ck-api", "2025.11", "-o", str(tmp / f"tiny-{arch}")])
    assert r.returncode == 0, r.stderr
    kernels = json.loads((tmp / f"tiny-{arch}" / "manifest.json").read_text())["kernels"]
    wanted = {"forward": lambda f: True, "bwd_data": lambda f: True, "bwd_weight": lambda f: bool(f.get("two_stage"))}
    names = []
    for variant, ok in wanted.items():
        fits = [(k["fields"]["tile_m"] * k["fields"]["tile_n"] * k["fields"]["tile_k"], n) for n, k in kernels.items()
                if k["variant"] == variant and ok(k["fields"])]
        assert fits, (arch, variant)
        names.append(min(fits)[1])
    path = tmp / f"names-{arch}.txt"
    path.write_text("".join(n + "\n" for n in names))
    return path


def _emit_tiny(arch: str, names: Path, out: Path) -> subprocess.CompletedProcess:
    return cli(["emit", "--arch", arch, "--names", str(names), "--ck-api", "2025.11", "--chunk-size", "1000",
                "-o", str(out)])


@pytest.mark.compile
def test_tiny_kernels_compile_for_gfx942_and_gfx950(tmp_path, monkeypatch):
    started = time.perf_counter()
    t_setup = _toolchain(monkeypatch)
    outs = {a: tmp_path / a for a in ("gfx942", "gfx950")}
    names = {a: _tiny_names(a, tmp_path) for a in outs}
    for arch, out in outs.items():
        r = _emit_tiny(arch, names[arch], out)
        assert r.returncode == 0, r.stderr
        data = json.loads((out / "manifest.json").read_text())
        assert len(data["units"]) == 1 and data["ck_api"] == "2025.11" and len(data["kernels"]) == 3
        variants = {k["variant"] for k in data["kernels"].values()}
        assert {"forward", "bwd_data", "bwd_weight"} <= variants, variants
        assert any(k["fields"].get("two_stage") for k in data["kernels"].values())

    # Ctrl-C while compiling: exit 130, no object, no temporary left behind (nor clang's reproducer of the killed
    # compile, megabytes it would write to $TMPDIR)
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    p = cli_popen(["build", str(outs["gfx942"]), "-j", "1"], env={"TMPDIR": str(tmpdir)})
    for _ in range(600):  # ninja makes obj/gfx942/ when it starts the compile
        if (outs["gfx942"] / "obj" / "gfx942").is_dir() or p.poll() is not None:
            break
        time.sleep(0.1)
    time.sleep(3)
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, out + err
    assert "Traceback" not in err
    assert not list((outs["gfx942"] / "obj").rglob("*.o")) and not list((outs["gfx942"] / "obj").rglob("*.tmp"))
    assert not list(tmpdir.iterdir()), list(tmpdir.iterdir())

    # both archs in parallel, one compile each; the interrupted build resumes
    t0 = time.perf_counter()
    procs = {a: cli_popen(["build", str(out), "-j", "1"]) for a, out in outs.items()}
    results = {a: p.communicate(timeout=1800) for a, p in procs.items()}
    t_compile = time.perf_counter() - t0
    for arch, p in procs.items():
        o, e = results[arch]
        assert p.returncode == 0, o + e
        assert "built: 1/1 objects" in o and "objects checked" in o, o

    # every object: AMDGPU, the arch's EF_AMDGPU_MACH, an entry point for each of its kernels
    for arch, out in outs.items():
        data = json.loads((out / "manifest.json").read_text())
        objs = sorted((out / "obj" / arch).glob("*.o"))
        assert len(objs) == 1
        machine, flags = _elf_header(objs[0])
        assert machine == EM_AMDGPU and flags & 0xFF == EF_MACH[arch], (arch, machine, hex(flags))
        entries = _kernel_entry_points(objs[0])
        for name, k in data["kernels"].items():
            frags = _expected_fragments(k["fields"])
            assert any(all(f in e for f in frags) for e in entries), (arch, name)
        checks = B.check_objects(out)  # ckspace's own check agrees
        assert checks and all(c.ok for c in checks), [c.problems for c in checks]

    # incremental: a no-op re-emit writes nothing and a second build compiles nothing
    before = {a: _mtimes(o) for a, o in outs.items()}
    for arch, out in outs.items():
        r = _emit_tiny(arch, names[arch], out)
        assert r.returncode == 0 and " 0 written," in r.stdout, r.stdout
        t1 = time.perf_counter()
        r = cli(["build", str(out)])
        assert r.returncode == 0, r.stdout + r.stderr
        assert time.perf_counter() - t1 < 60
    assert {a: _mtimes(o) for a, o in outs.items()} == before
    print(f"\ncompile test: toolchain setup {t_setup:.0f} s, two compiles in parallel {t_compile:.0f} s, "
          f"total {time.perf_counter() - started:.0f} s")


@pytest.mark.compile
def test_compile_failure_table(tmp_path, monkeypatch):
    """A real compiler error: exit 1, the failure table names the kernel and its first error; no traceback. One
    kernel only: each other unit would be a full compile (minutes on 2 cores) that this test does not look at."""
    _toolchain(monkeypatch)
    bad = tmp_path / "bad"
    r = cli(["emit", "--arch", "gfx942", "--variant", "bwd_data", "--ndim", "2", "--dtype", "fp16", "--ck-api",
             "2025.11", "--where", "tile_m == 128 and tile_n == 128 and wave_m == 1", "-o", str(bad)])
    assert r.returncode == 0, r.stderr
    [name] = json.loads((bad / "manifest.json").read_text())["kernels"]
    header = bad / f"{name}.hpp"
    header.write_text('#include "ckspace_no_such_header.hpp"\n' + header.read_text())
    r = cli(["build", str(bad)])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert "failed compile unit" in r.stdout and name in r.stdout, r.stdout
    assert "'ckspace_no_such_header.hpp' file not found" in r.stdout and "build.log" in r.stdout
    assert "FAILED" in r.stdout.splitlines()[-1]


PROBE = ('#include <hip/hip_runtime.h>\n'
         'extern "C" __global__ void ckspace_launcher_probe(float* p) { p[threadIdx.x] = 2.0f; }\n')


def _probe_dir(tmp_path: Path) -> Path:
    """An emitted directory whose one compile unit is replaced by a one-line kernel: a compile of a second."""
    out = tmp_path / "probe"
    r = cli(["emit", "--arch", "gfx942", "--variant", "forward", "--ndim", "2", "--dtype", "fp16", "--ck-api",
             "2025.11", "--where", "tile_m == 128 and tile_n == 128 and pipeline == 'compv3'", "--chunk-size", "1000",
             "-o", str(out)])
    assert r.returncode == 0, r.stderr
    units = json.loads((out / "manifest.json").read_text())["units"]
    assert len(units) == 1
    (out / next(iter(units))).write_text(PROBE)
    return out


def _check_probe(out: Path) -> None:
    obj = out / "obj" / "gfx942" / "grouped_conv_instances_0000.o"
    machine, flags = _elf_header(obj)
    assert machine == EM_AMDGPU and flags & 0xFF == EF_MACH["gfx942"]
    assert "ckspace_launcher_probe" in _kernel_entry_points(obj)


@pytest.mark.compile
def test_launcher_ccache_sccache_pass_through(tmp_path, monkeypatch):
    """--launcher ccache|sccache prefixes every compile with the launcher found on PATH (here logging stand-ins)."""
    _toolchain(monkeypatch)
    out = _probe_dir(tmp_path)
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name in ("ccache", "sccache"):
        fake = bindir / name
        fake.write_text(f'#!/bin/sh\necho "$*" >> "{tmp_path}/{name}.log"\nexec "$@"\n')
        fake.chmod(0o755)
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    for name in ("ccache", "sccache"):
        shutil.rmtree(out / "obj", ignore_errors=True)
        r = cli(["build", str(out), "--launcher", name, "--no-check"], env=env)
        assert r.returncode == 0, r.stdout + r.stderr
        logged = (tmp_path / f"{name}.log").read_text()
        assert "hipclang-zig" in logged and "--offload-arch=gfx942" in logged and "grouped_conv_instances_0000" in logged
        _check_probe(out)


def _distcc() -> tuple[dict[str, str] | None, str, subprocess.Popen | None, Path | None]:
    """A distccd on 127.0.0.1 (as user distccd) and the client environment; or None and why not.

    distcc is used where it is installed and never installed by the tests (CI's fresh machine has none: the test
    skips there, saying so). The wrapper's split of a compile, which is what distcc relies on, is tested without it
    by test_wrapper_split_compiles_like_distcc."""
    if not (shutil.which("distcc") and shutil.which("distccd")):
        return None, "distcc is not installed (the tests never install it; the split it needs is tested alone)", \
            None, None
    if not _is_root():
        return None, "distccd is started here as root with --user (it refuses to run as root); not root", None, None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    import tempfile

    ddir = Path(tempfile.mkdtemp(prefix="ckspace-distcc-"))  # under /tmp: distccd runs as another user
    ddir.chmod(0o777)
    (ddir / "client").mkdir()
    user = "distccd" if subprocess.run(["id", "distccd"], capture_output=True).returncode == 0 else "nobody"
    server = subprocess.Popen(["distccd", "--no-detach", "--daemon", "--port", str(port), "--listen", "127.0.0.1",
                               "--allow", "127.0.0.1", "--enable-tcp-insecure", "--user", user, "--jobs", "2",
                               "--log-file", str(ddir / "distccd.log")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(50):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.1)
    env = {"DISTCC_HOSTS": f"127.0.0.1:{port}/2", "DISTCC_DIR": str(ddir / "client"), "DISTCC_FALLBACK": "0",
           "DISTCC_BACKOFF_PERIOD": "0", "DISTCC_VERBOSE": "1", "DISTCC_LOG": str(ddir / "client.log")}
    return env, "", server, ddir


@pytest.mark.compile
def test_launcher_distcc_localhost(tmp_path, monkeypatch):
    """--launcher distcc against a distccd on localhost: preprocessed here, compiled by the server (no fallback)."""
    _toolchain(monkeypatch)
    if not _readable_by_all(T.default_dir()):
        pytest.skip(f"the toolchain in {T.default_dir()} is not readable by distccd's user (set by "
                    "CKSPACE_TOOLCHAIN_DIR or XDG_CACHE_HOME)")
    denv, why_not, server, ddir = _distcc()
    if denv is None:
        pytest.skip(why_not)
    try:
        out = _probe_dir(tmp_path)
        r = cli(["build", str(out), "--launcher", "distcc", "--no-check"], env=denv)
        log = Path(denv["DISTCC_LOG"]).read_text() if Path(denv["DISTCC_LOG"]).exists() else ""
    finally:
        server.terminate()
        server.wait(timeout=30)
    shutil.rmtree(ddir, ignore_errors=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"on {denv['DISTCC_HOSTS']} completed ok" in log, log[-2000:]
    _check_probe(out)


@pytest.mark.compile
def test_toolchain_binaries_find_their_libraries(monkeypatch):
    """Every ELF program and library of the set-up toolchain loads on this machine: `ldd` finds each library it
    needs (a fresh Debian has no LLVM: a binary that needs one of its libraries, as clang-offload-bundler of
    clang-tools-19 did, would fail only there)."""
    _toolchain(monkeypatch)
    root = T.default_dir()
    elves = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        if "dl" in path.relative_to(root).parts[:1]:
            continue  # the download cache: archives, not programs
        with open(path, "rb") as fh:
            if fh.read(4) == b"\x7fELF" and (os.access(path, os.X_OK) or ".so" in path.name):
                elves.append(path)
    assert any(p.name == "zig" for p in elves), elves
    for path in elves:
        r = subprocess.run(["ldd", str(path)], capture_output=True, text=True)
        assert "not found" not in r.stdout + r.stderr, f"{path}: {r.stdout}"
    # the wrappers run only programs of the toolchain
    for wrapper in (root / "bin").iterdir():
        if wrapper.read_bytes()[:2] == b"#!":
            program = [w for w in wrapper.read_text().split() if w.startswith(str(root))]
            assert program and Path(program[0]).is_file(), wrapper


@pytest.mark.compile
def test_wrapper_split_compiles_like_distcc(tmp_path, monkeypatch):
    """distcc's split, done by hand with the registry compiler: `-E` here, then a compile of the `.ii` alone in
    another directory (as distccd does). The .ii is plain device code, and the object has the kernel."""
    _toolchain(monkeypatch)
    tc = T.registry_toolchain()
    cmd, flags = tc.compiler_for("gfx942"), tc.flags_for("gfx942")
    src = tmp_path / "probe.cpp"
    src.write_text(PROBE)
    pre = subprocess.run([*cmd, *flags, "-E", str(src)], capture_output=True, text=True, cwd=tmp_path)
    assert pre.returncode == 0, pre.stderr
    assert "ckspace_launcher_probe" in pre.stdout and "__CLANG_OFFLOAD_BUNDLE" not in pre.stdout
    remote = tmp_path / "server"
    remote.mkdir()
    (remote / "distcc_1.ii").write_text(pre.stdout)
    done = subprocess.run([*cmd, *flags, "-c", "distcc_1.ii", "-o", "probe.o"], capture_output=True, text=True,
                          cwd=remote)
    assert done.returncode == 0, done.stderr
    machine, e_flags = _elf_header(remote / "probe.o")
    assert machine == EM_AMDGPU and e_flags & 0xFF == EF_MACH["gfx942"]
    assert "ckspace_launcher_probe" in _kernel_entry_points(remote / "probe.o")


@pytest.mark.compile
def test_touching_a_kernel_header_rebuilds_its_unit_alone(tmp_path, monkeypatch):
    """ninja's dependency log knows each unit's headers (the wrapper writes the depfiles clang leaves out of a
    device-only compile): a touched kernel header rebuilds the one unit that includes it, and nothing else."""
    _toolchain(monkeypatch)
    out = tmp_path / "deps"
    r = cli(["emit", "--arch", "gfx942", "--variant", "forward", "--ndim", "2", "--dtype", "fp16", "--ck-api",
             "2025.11", "--where", "tile_m == 128 and tile_n == 128 and pipeline == 'compv3' and warp_tile_m == 16 and "
             "specialization == 'default'", "--chunk-size", "1",
             "--max-kernels", "2", "-o", str(out)])
    assert r.returncode == 0, r.stderr
    units = json.loads((out / "manifest.json").read_text())["units"]
    assert len(units) == 2, units
    headers = {}
    for i, (unit, kernels) in enumerate(sorted(units.items())):
        assert len(kernels) == 1
        header = out / f"{kernels[0]}.hpp"
        assert f'#include "../{header.name}"' in (out / unit).read_text()  # the unit includes its kernel's header
        header.write_text("#pragma once\n#include <hip/hip_runtime.h>\n")  # cheap to compile, still included
        (out / unit).write_text(f'#include "../{header.name}"\n'
                                f'extern "C" __global__ void ckspace_dep_probe_{i}(float* p) {{ p[0] = {i}.0f; }}\n')
        headers[Path(unit).stem] = header
    r = cli(["build", str(out), "--no-check"])
    assert r.returncode == 0, r.stdout + r.stderr
    deps = subprocess.run([B.find_ninja(), "-C", str(out), "-t", "deps"], capture_output=True, text=True).stdout
    for stem, header in headers.items():
        block = deps.split(f"obj/gfx942/{stem}.o:", 1)[1].split("\n\n", 1)[0]
        assert header.name in block, deps  # its own kernel header ...
        assert all(h.name not in block for s, h in headers.items() if s != stem)  # ... and not the other's
    before = _mtimes(out)
    touched = sorted(headers)[0]
    later = time.time() + 5
    os.utime(headers[touched], (later, later))
    r = cli(["build", str(out), "--no-check"])
    assert r.returncode == 0, r.stdout + r.stderr
    after = _mtimes(out)
    changed = {Path(p).stem for p in before if after[p] != before[p]}
    assert changed == {touched}, (changed, r.stdout)
