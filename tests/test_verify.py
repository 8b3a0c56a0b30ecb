"""`ckspace verify`: per-kernel verdicts from the real compiler, bisection of a failing unit down to its kernel,
resuming from the work directory, and the proposed rule of a failure group.

The compile tests use the registry toolchain (as tests/test_build.py does) and a handful of small kernels: two for
gfx942, four for gfx950 of which one is broken on purpose (a missing include: a fatal error, so the broken units fail
at once and the test costs about as much as compiling the three good kernels).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ckspace import Space
from ckspace.cli import main
from ckspace.errors import CkspaceError
from ckspace.codegen import verify as V
from ckspace.rules.names import parse_name

from test_build import _toolchain  # the registry toolchain, set up once (skipped outside CI when it cannot be)

# Small 2D fp16 forward kernels of gfx942's and gfx950's full that CK API 2025.11 builds (a few seconds each).
WHERE = "tile_m <= 32 and tile_n <= 32 and specialization == 'default' and scheduler == 'intrawave'"


def _kernels(arch: str, n: int) -> list[dict]:
    space = Space(arch=arch, rules="+ck-api-2025.11")
    configs = list(space.enumerate(variant="forward", ndim=2, dtype="fp16", where=WHERE))
    assert len(configs) >= n
    return space, configs[:n]


@pytest.mark.compile
def test_verify_compiles_a_covering_sample_for_gfx942_and_resumes(tmp_path, monkeypatch, capsys):
    _toolchain(monkeypatch)
    # a covering sample (the default pick) of the two 16x16x64 kernels: both pipelines are values it must cover
    where = WHERE + " and tile_m == 16 and tile_n == 16 and tile_k == 64"
    args = ["verify", "--arch", "gfx942", "--variant", "forward", "--ndim", "2", "--dtype", "fp16", "--where", where,
            "--objective", "tiny", "--ck-api", "2025.11", "--unit-size", "2", "-o", str(tmp_path / "v"),
            "--format", "json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["counts"] == {"ok": 2, "failed": 0, "no-matrix": 0, "no-launch": 0, "timed-out": 0, "not-run": 0, "unexpressible": 0}
    assert out["compiles"] == 1
    assert {parse_name(k["name"])["pipeline"] for k in out["kernels"]} == {"compv1", "mem"}
    assert all(k["peak_mib"] and k["peak_mib"] > 100 for k in out["kernels"])  # measured around the compiler
    assert all(k["unit_size"] == 2 and not k["cached"] for k in out["kernels"])
    assert all(k["seconds"] is not None and k["seconds"] > 0 for k in out["kernels"])  # from ninja's log
    # the ISA of each of the two kernels of the unit, by its own entry points: MFMA code, the model's LDS
    assert out["warnings"] == [] and all(k["isa"]["matrix_instructions"] > 0 for k in out["kernels"])
    assert all(k["isa"]["entry_points"] >= 1 and k["lds_model"] is not None for k in out["kernels"])
    # the second run compiles nothing: the verdicts are kept per kernel text, arch and compiler
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["compiles"] == 0 and all(k["cached"] for k in again["kernels"])
    assert [k["name"] for k in again["kernels"]] == [k["name"] for k in out["kernels"]]


@pytest.mark.compile
def test_a_broken_kernel_is_bisected_to_itself_on_gfx950(tmp_path, monkeypatch):
    _toolchain(monkeypatch)
    space, configs = _kernels("gfx950", 4)
    broken = str(configs[2]["name"])

    def break_one(work: Path) -> None:
        header = work / f"{broken}.hpp"
        text = header.read_text()
        if "ckspace_broken_on_purpose" not in text:
            header.write_text('#include "ckspace_broken_on_purpose.h"\n' + text)

    result = V.verify(space, configs, tmp_path / "v", revision="2025.11", unit_size=4, jobs=2, after_emit=break_one)
    status = {k.name: k.status for k in result.kernels}
    assert status == {str(c["name"]): ("failed" if c["name"] == broken else "ok") for c in configs}
    failed = result.failed[0]
    assert "ckspace_broken_on_purpose.h" in failed.error and failed.unit_size == 1
    # bisection: the unit of 4, its halves, then the halves of the failing half: 1 + 2 + 2 compiles, log2(4) rounds
    assert result.compiles == 5 and result.rounds == 3
    # the failure group and a rule that separates it from the three kernels that compiled
    (proposal,) = result.proposals
    assert proposal.kernels == [broken] and proposal.conditions
    ok = [c for c in configs if c["name"] != broken]
    assert all(not all(V._holds(c, cond) for cond in proposal.conditions) for c in ok)
    assert all(V._holds(configs[2], cond) for cond in proposal.conditions)


def test_separate_finds_the_fewest_field_values():
    # bf16 bwd_weight kernels without two-stage fail when vec_c >= 2 (issue 13's clang-22 finding, as data)
    def k(vec_c, two_stage, dtype="bf16"):
        return {"name": f"k{vec_c}{two_stage}{dtype}", "variant": "bwd_weight", "dtype": dtype, "vec_c": vec_c,
                "two_stage": two_stage}
    failed = [k(2, False), k(4, False), k(8, False)]
    passed = [k(1, False), k(2, True), k(8, True), k(4, False, "fp16")]
    cond = V.separate(failed, passed)
    assert cond is not None
    assert all(not all(V._holds(p, c) for c in cond) for p in passed)
    assert all(all(V._holds(f_, c) for c in cond) for f_ in failed)
    assert set(cond) == {("two_stage", "==", False), ("dtype", "==", "bf16"), ("vec_c", ">=", 2)}
    # a passing kernel identical to a failing one on every shared field: nothing separates them
    assert V.separate([k(2, False)], [k(2, False)]) is None


def test_error_classes_ignore_paths_and_quoted_names():
    a = V.error_class("/x/ck_tile/a.hpp:12:3: error: no member named 'foo' in 'Bar<1>'")
    b = V.error_class("/y/ck_tile/a.hpp:99:1: error: no member named 'baz' in 'Bar<2>'")
    assert a == b
    llvm = "fatal error: error in backend: Cannot select: {}: v2i16,ch = AMDGPUISD::BUFFER_ATOMIC_FADD Constant:i32<{}>"
    assert V.error_class(llvm.format("0x7ff2da09c010", 12)) == V.error_class(llvm.format("0x7fd7e215ec50", 4))


def test_verify_usage_errors_are_one_line(tmp_path, capsys):
    for extra in (["--unit-size", "0"], ["--budget", "0"], ["--sample", "0"], ["--set", "nope"], ["-j", "0"],
                  ["--toolchain", "nope"], ["--names", "/nonexistent/names.txt"], ["--names", "-", "--set", "tiny"],
                  ["--compile-timeout", "0"], ["--compile-timeout", "-5"], ["--compile-timeout", "soon"],
                  ["--compile-timeout", "nan"]):
        assert main(["verify", "--arch", "gfx950", "-o", str(tmp_path / "v"), *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("ckspace: error: "), (extra, err)


def test_a_spent_budget_leaves_kernels_not_run_and_exit_1(tmp_path, capsys):
    args = ["verify", "--arch", "gfx950", "--variant", "forward", "--ndim", "2", "--dtype", "fp16", "--where", WHERE,
            "--sample", "3", "--ck-api", "2025.11", "-o", str(tmp_path / "v"), "--budget", "0.000001",
            "--format", "json"]
    assert main(args) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["counts"] == {"ok": 0, "failed": 0, "no-matrix": 0, "no-launch": 0, "timed-out": 0, "not-run": 3, "unexpressible": 0}
    assert out["compiles"] == 0
    assert "--budget" in out["stopped"]


def test_enumerate_toolchain_lists_only_what_that_compiler_builds(capsys):
    # toolchain-clang22 (rules/toolchain-clang22.toml, from the verify run in docs/build.md): on gfx950 a bf16
    # bwd_weight kernel without two-stage needs vec_c == 1; checked here on the plain list, independently.
    base = ["enumerate", "--arch", "gfx950", "--variant", "bwd_weight", "--dtype", "bf16", "--ck-api", "2025.11"]
    assert main(base) == 0
    every = capsys.readouterr().out.split()
    assert main([*base, "--toolchain", "registry"]) == 0
    built = capsys.readouterr().out.split()

    def builds(name: str) -> bool:
        cfg = parse_name(name)
        return cfg["two_stage"] or cfg["vec_c"] == 1
    assert built == [n for n in every if builds(n)] and len(built) < len(every)
    # on gfx942 toolchain-clang22 has no rule (verify found nothing there): the same list
    assert main(["enumerate", "--arch", "gfx942", "--variant", "bwd_weight", "--dtype", "bf16", "--count",
                 "--format", "json", "--toolchain", "registry"]) == 0
    with_tc = json.loads(capsys.readouterr().out)["total"]
    assert main(["enumerate", "--arch", "gfx942", "--variant", "bwd_weight", "--dtype", "bf16", "--count",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == with_tc
    assert main(["enumerate", "--arch", "gfx950", "--toolchain", "gcc"]) == 2
    assert "unknown --toolchain 'gcc'" in capsys.readouterr().err


FAKE_CC = """#!{python}
# A stand-in compiler: writes the object (and its depfile) after holding {mib} MiB; a unit that includes the kernel
# named in $CKSPACE_TEST_SLOW sleeps first, so that a deadline finds it running (and ignores SIGTERM where
# $CKSPACE_TEST_STUBBORN is set). verify compiles to assembly (-S) and
# assembles that (-x assembler): with -S it writes the assembly of one CK Tile kernel entry point (FAKE_ASM) with an
# MFMA instruction (none for a unit that includes the kernel named in $CKSPACE_TEST_NO_MATRIX), and given an
# assembly it writes an ELF object with the descriptor of each kernel of it (fake_object).
import os, sys, time
args = sys.argv[1:]
out = args[args.index("-o") + 1]
if "assembler" in args:
    open(out, "wb").write(fake_object(open(args[args.index("-c") + 1]).read()))
    sys.exit(0)
src = next(a for a in args if a.endswith(".cpp"))
slow = os.environ.get("CKSPACE_TEST_SLOW")
if slow and slow in open(src).read():
    if os.environ.get("CKSPACE_TEST_STUBBORN"):  # a compiler slow to stop: only the SIGKILL after the grace ends it
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(120)
fail = os.environ.get("CKSPACE_TEST_FAIL")
if fail and fail in open(src).read():
    sys.stderr.write(src + ":1:1: error: fake backend failure: Cannot select 0x5555\\n")
    sys.exit(1)
held = bytearray({mib} * 1024 * 1024)
held[::4096] = b"x" * len(held[::4096])
open(args[args.index("-MF") + 1], "w").write(out.removesuffix(".tmp") + ": " + src + "\\n")
if "-S" in args:
    no_matrix = os.environ.get("CKSPACE_TEST_NO_MATRIX")
    matrix = "" if no_matrix and no_matrix in open(src).read() else "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]"
    open(out, "w").write(FAKE_ASM.replace("MATRIX", matrix))
else:
    open(out, "wb").write(b"object")
"""

# What the stand-in compiler writes for -S: one kernel entry point of CK Tile (its demangled name starts with `void
# ck_tile::kentry<`, so a unit of one kernel owns it) holding MATRIX, with 1,024 bytes of LDS.
FAKE_ASM = """\t.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
\t.text
\t.globl\t_ZN7ck_tile6kentryILi1EEEvv ; -- Begin function _ZN7ck_tile6kentryILi1EEEvv
\t.type\t_ZN7ck_tile6kentryILi1EEEvv,@function
_ZN7ck_tile6kentryILi1EEEvv:
\ts_load_dwordx4 s[0:3], s[4:5], 0x0
\tMATRIX
\ts_endpgm
\t.section\t.rodata,"a",@progbits
\t.amdhsa_kernel _ZN7ck_tile6kentryILi1EEEvv
\t\t.amdhsa_group_segment_fixed_size 1024
\t\t.amdhsa_private_segment_fixed_size 0
\t\t.amdhsa_next_free_vgpr max(totalnumvgprs(_ZN7ck_tile6kentryILi1EEEvv.num_agpr, _ZN7ck_tile6kentryILi1EEEvv.num_vgpr), 1, 0)
\t.end_amdhsa_kernel
\t.text
                                        ; -- End function
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     16
    .group_segment_fixed_size: 1024
    .name:           _ZN7ck_tile6kentryILi1EEEvv
    .private_segment_fixed_size: 0
    .sgpr_count:     20
    .vgpr_count:     48
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx950
...
\t.end_amdgpu_metadata
"""


def fake_object(asm: str) -> bytes:
    """A relocatable AMDGPU ELF object holding the kernel descriptor (`NAME.kd`, 64 bytes: LDS, scratch, ...) of each
    `.amdhsa_kernel` of an assembly text, written here without an assembler."""
    import re
    import struct

    kernels = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in re.finditer(
        r"\.amdhsa_kernel (\S+)\n\s*\.amdhsa_group_segment_fixed_size (\d+)\n\s*\.amdhsa_private_segment_fixed_size (\d+)",
        asm)]
    strtab, offsets = b"\0", []
    for name, _, _ in kernels:
        offsets.append(len(strtab))
        strtab += name.encode() + b".kd\0"
    rodata = b"".join(struct.pack("<II", lds, scratch) + bytes(56) for _, lds, scratch in kernels)
    symtab = bytes(24) + b"".join(struct.pack("<IBBHQQ", off, 0x11, 0, 2, 64 * i, 64) for i, off in enumerate(offsets))
    data = bytearray(64)

    def put(blob: bytes) -> int:
        data.extend(bytes(-len(data) % 64))
        at = len(data)
        data.extend(blob)
        return at

    at_str, at_ro, at_sym = put(strtab), put(rodata), put(symtab)
    data.extend(bytes(-len(data) % 8))
    shoff = len(data)
    for stype, flags, at, size, link, align, entsize in ((0, 0, 0, 0, 0, 0, 0), (3, 0, at_str, len(strtab), 0, 1, 0),
                                                          (1, 2, at_ro, len(rodata), 0, 64, 0),
                                                          (2, 0, at_sym, len(symtab), 1, 8, 24)):
        data += struct.pack("<IIQQQQIIQQ", 0, stype, flags, 0, at, size, link, 1 if stype == 2 else 0, align, entsize)
    data[:64] = b"\x7fELF\x02\x01\x01\x40" + bytes(8) + struct.pack("<HHIQQQIHHHHHH", 1, 0xE0, 1, 0, 0, shoff, 0x54F,
                                                                        64, 0, 0, 64, 4, 1)
    return bytes(data)


def fake_compiler_script(mib: int = 16, hooks: str = "") -> str:
    """The stand-in compiler's source: FAKE_CC with its assembly and object writers, and `hooks` run before it holds
    its memory."""
    import inspect
    import sys

    head, body = FAKE_CC.format(python=sys.executable, mib=mib).split("import os, sys, time\n", 1)
    return (head + "import os, sys, time\n" + f"FAKE_ASM = {FAKE_ASM!r}\n" + inspect.getsource(fake_object)
            + body.replace("held = bytearray", hooks + "held = bytearray"))


def _one_slow_compile(tmp_path, monkeypatch, mib: int, kernels: int, slow: int):
    """The stand-in compiler (holding `mib` MiB) for `kernels` gfx950 kernels, the one at index `slow` sleeping 120 s
    ($CKSPACE_TEST_SLOW); (space, configs, the slow kernel's name, verify's common arguments, a job per kernel)."""
    fake = tmp_path / "fakecc"
    fake.write_text(fake_compiler_script(mib))
    fake.chmod(0o755)
    (tmp_path / "inc" / "ck_tile").mkdir(parents=True)
    space, configs = _kernels("gfx950", kernels)
    name = str(configs[slow]["name"])
    monkeypatch.setenv("CKSPACE_TEST_SLOW", name)
    common = dict(revision="2025.11", unit_size=1, jobs=kernels, compiler=str(fake), ck_include=str(tmp_path / "inc"))
    return space, configs, name, common


@pytest.mark.slow
def test_a_deadline_stops_a_round_and_the_next_run_resumes_with_peak_memory(tmp_path, monkeypatch):
    import time

    space, configs, slow, common = _one_slow_compile(tmp_path, monkeypatch, mib=160, kernels=3, slow=1)
    started = time.monotonic()
    first = V.verify(space, configs, tmp_path / "v", budget=8, **common)
    assert time.monotonic() - started < 60  # the sleeping compile was stopped at the deadline, not waited for
    status = {k.name: k.status for k in first.kernels}
    assert status == {str(c["name"]): ("not-run" if c["name"] == slow else "ok") for c in configs}
    assert "--budget" in first.stopped and first.compiles == 2
    # each compile's peak memory, measured by ckspace/codegen/rusage.py around the compiler (160 MiB held)
    assert all(160 <= k.peak_mib < 1024 for k in first.kernels if k.status == "ok")
    assert not list((tmp_path / "v").rglob("*.tmp"))  # the stopped compile left no half-written object
    monkeypatch.delenv("CKSPACE_TEST_SLOW")
    second = V.verify(space, configs, tmp_path / "v", **common)
    assert {k.name: k.status for k in second.kernels} == {str(c["name"]): "ok" for c in configs}
    assert second.compiles == 1 and not second.stopped
    assert {k.name for k in second.kernels if not k.cached} == {slow}


def test_a_compile_past_the_timeout_is_killed_and_gives_no_verdict(tmp_path, monkeypatch, capsys):
    """--compile-timeout: the compile that sleeps is killed (the run does not wait the 120 s), its kernel is
    timed-out with rusage.py's line, nothing of it is kept, and the next run with time compiles it."""
    import time

    space, configs, slow, common = _one_slow_compile(tmp_path, monkeypatch, mib=16, kernels=2, slow=0)
    started = time.monotonic()
    first = V.verify(space, configs, tmp_path / "v", compile_timeout=3, **common)
    assert time.monotonic() - started < 60
    status = {k.name: k.status for k in first.kernels}
    assert status == {str(c["name"]): ("timed-out" if c["name"] == slow else "ok") for c in configs}
    assert [k.name for k in first.timed_out] == [slow] and not first.failed and not first.stopped
    assert first.timed_out[0].error.startswith("rusage.py: compile stopped after 3 s")
    assert not list((tmp_path / "v").rglob("*.tmp"))  # the killed compile left no half-written object
    monkeypatch.delenv("CKSPACE_TEST_SLOW")
    second = V.verify(space, configs, tmp_path / "v", compile_timeout=60, **common)
    assert {k.name: k.status for k in second.kernels} == {str(c["name"]): "ok" for c in configs}
    assert {k.name for k in second.kernels if not k.cached} == {slow}  # no verdict was kept for it


@pytest.mark.slow
def test_a_round_starts_its_dearest_compile_and_a_resumed_run_tries_a_stopped_one_last(tmp_path, monkeypatch):
    """Within a round ninja starts the units in the order emitted: dearest first (templates/compile-cost.toml), so a
    round does not end waiting on a dear compile that started last. A compile an earlier run stopped at its deadline
    is kept as an attempt (not a verdict) and goes after the kernels not yet tried."""
    fake = tmp_path / "fakecc"
    fake.write_text(fake_compiler_script(16))
    fake.chmod(0o755)
    (tmp_path / "inc" / "ck_tile").mkdir(parents=True)
    space, configs = _kernels("gfx950", 10)
    # two compv1 kernels, then a mem kernel: the compile-cost model puts mem's hot loop and tails at twice their cost
    picked = [c for c in configs if c["pipeline"] == "compv1"][:2] + [c for c in configs if c["pipeline"] == "mem"][:1]
    assert len(picked) == 3
    dear = str(picked[2]["name"])
    monkeypatch.setenv("CKSPACE_TEST_SLOW", dear)  # its compile sleeps 120 s
    common = dict(revision="2025.11", unit_size=1, jobs=1, compiler=str(fake), ck_include=str(tmp_path / "inc"))
    # and ignores SIGTERM, as a loaded compiler can take longer than the grace to end: the SIGKILL after it takes the
    # compile wrapper (rusage.py) down too, which has written the compile's line at the SIGTERM
    monkeypatch.setenv("CKSPACE_TEST_STUBBORN", "1")
    first = V.verify(space, picked, tmp_path / "v", budget=4, **common)
    monkeypatch.delenv("CKSPACE_TEST_STUBBORN")
    # one job: the dear kernel, last in the order given, was started first and held the job till the deadline
    assert {k.name: k.status for k in first.kernels} == {str(c["name"]): "not-run" for c in picked}
    attempts = json.loads((tmp_path / "v" / V.RESULTS).read_text())["attempts"]
    assert len(attempts) == 1 and 2.0 <= next(iter(attempts.values())) <= 60.0
    second = V.verify(space, picked, tmp_path / "v", budget=15, **common)
    # now the two untried kernels go first and get their verdicts; the dear one is stopped again at the deadline
    assert {k.name: k.status for k in second.kernels} == {
        str(c["name"]): ("not-run" if c["name"] == dear else "ok") for c in picked}
    saved = json.loads((tmp_path / "v" / V.RESULTS).read_text())
    assert len(saved["kernels"]) == 2 and list(saved["attempts"]) == list(attempts)
    assert saved["attempts"][next(iter(attempts))] >= attempts[next(iter(attempts))]
    monkeypatch.delenv("CKSPACE_TEST_SLOW")
    third = V.verify(space, picked, tmp_path / "v", **common)  # a verdict ends the attempt
    assert {k.name for k in third.kernels if not k.cached} == {dear}
    assert "attempts" not in json.loads((tmp_path / "v" / V.RESULTS).read_text())


def _builds_with_clang22(name: str) -> bool:
    """The packed bf16 atomic add is compiled only for split-K, which the 2025.11 launcher instantiates for CK Tile's
    atomic widths 2, 4 and 8 (templates/2025.11/kernel_gemm.hpp.j2), and never with two-stage's fp32 workspace."""
    cfg = parse_name(name)
    return bool(cfg["two_stage"]) or cfg["vec_c"] not in (2, 4, 8)


BF16_BWD_WEIGHT = ["--arch", "gfx950", "--variant", "bwd_weight", "--dtype", "bf16", "--ndim", "2", "--where",
                   "pipeline == 'compv3'", "--ck-api", "2025.11"]


def test_emit_leaves_out_what_the_build_compiler_cannot_build_unless_told(tmp_path, capsys, monkeypatch):
    from ckspace.codegen import toolchain

    monkeypatch.setattr(toolchain, "find_rocm", lambda: None)  # the registry toolchain is what build would use
    assert main(["enumerate", *BF16_BWD_WEIGHT]) == 0
    every = capsys.readouterr().out.split()
    assert main(["emit", *BF16_BWD_WEIGHT, "-o", str(tmp_path / "auto")]) == 0
    assert "toolchain-clang22 on" in capsys.readouterr().out
    emitted = sorted(json.loads((tmp_path / "auto" / "manifest.json").read_text())["kernels"])
    assert emitted == sorted(n for n in every if _builds_with_clang22(n))
    assert main(["emit", *BF16_BWD_WEIGHT, "-o", str(tmp_path / "none"), "--toolchain", "none"]) == 0
    kept = sorted(json.loads((tmp_path / "none" / "manifest.json").read_text())["kernels"])
    assert kept == sorted(every) and len(kept) > len(emitted)
    capsys.readouterr()
    # build refuses, in a second and before any compile, the kernels its compiler is known not to build
    assert main(["build", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    failing = [n for n in kept if not _builds_with_clang22(n)]
    assert len(err) == len(failing) + 1
    assert all(f"{n} does not build on gfx950 with toolchain-clang22" in line for n, line in zip(failing, err))
    assert "--force" in err[-1] and not (tmp_path / "none" / "obj").exists()
    assert main(["emit", *BF16_BWD_WEIGHT, "-o", str(tmp_path / "x"), "--toolchain", "clang99"]) == 2
    assert "auto, registry, none" in capsys.readouterr().err


def test_each_compiler_has_its_family_name():
    from ckspace.codegen import toolchain

    assert toolchain.family_of_command(["/c/toolchain-v2/bin/hipclang-zig"]) == "clang22"
    assert toolchain.family_of_command(["/c/toolchain-v2/bin/hipclang-19"]) == "clang19"
    assert toolchain.family_of_command(["/opt/rocm/bin/amdclang++", "-x", "hip"]) == "amdclangpp"
    assert toolchain.family_for("gfx942", "/usr/bin/clang_20") == "clang-20"


def test_record_appends_the_proposed_rules_to_a_rule_file(tmp_path, monkeypatch, capsys):
    import sys

    from ckspace.rules.data_schema import RULES_FILE
    from ckspace.rules.schema import tomllib

    fake = tmp_path / "fakecc"
    fake.write_text(fake_compiler_script(16))
    fake.chmod(0o755)
    (tmp_path / "inc" / "ck_tile").mkdir(parents=True)
    space, configs = _kernels("gfx950", 4)
    names = sorted(str(c["name"]) for c in configs)
    broken = names[1]
    monkeypatch.setenv("CKSPACE_TEST_FAIL", broken)
    (tmp_path / "names.txt").write_text("# four kernels\n" + "\n".join(names) + "\n\n")
    record = tmp_path / "rules" / "toolchain-fakecc.toml"
    args = ["verify", "--arch", "gfx950", "--names", str(tmp_path / "names.txt"), "--ck-api", "2025.11",
            "--compiler", str(fake), "--ck-include", str(tmp_path / "inc"), "--unit-size", "4", "-j", "2",
            "-o", str(tmp_path / "v"), "--record", str(record)]
    # a rule file that cannot take rules stops verify before any compile
    assert main([*args[:-1], str(tmp_path)]) == 2
    assert "a directory" in capsys.readouterr().err
    record.parent.mkdir()
    record.write_text("[[rule]\n")
    assert main(args) == 2 and "not a readable TOML rule file" in capsys.readouterr().err
    assert not (tmp_path / "v" / "verify-results.json").exists()
    record.unlink()
    assert main(args) == 1
    out = capsys.readouterr()
    assert f"FAILED {broken}" in out.out and "1 proposed rule(s) appended" in out.err
    data = tomllib.loads(record.read_text())
    RULES_FILE.check(data, "toolchain-fakecc.toml")  # the rule file schema: no unknown key, every required one
    (rule,) = data["rule"]
    assert rule["id"] == "toolchain-fakecc.proposed-1" and rule["family"] == "toolchain-fakecc"
    assert rule["when"] == "arch.name == 'gfx950'" and rule["reject"] == broken
    assert rule["accept"] in names and rule["accept"] != broken
    assert "CK API 2025.11" in rule["source"] and "fake backend failure" in rule["source"]
    assert rule["require"].startswith("not (")
    # again (the verdicts are kept): the same proposal is appended under the next free number
    assert main(args) == 1
    capsys.readouterr()
    again = tomllib.loads(record.read_text())["rule"]
    assert [r["id"] for r in again] == ["toolchain-fakecc.proposed-1", "toolchain-fakecc.proposed-2"]


def test_the_cshuffle_wavefront_fact_follows_ck_tiles_static_assert():
    # ck-api-2025.11.cshuffle-wavefront, found by verify on gfx90a (docs/build.md): recomputed here from CK Tile's
    # own arithmetic (CShuffleEpilogue's shuffle tile, tile_distribution_encoding_pattern_2d<thread_raked>) over the
    # whole of gfx90a's full set, and compared with the model's verdicts rule by rule.
    space = Space(arch="gfx90a")
    warp = 64

    def breaks(c) -> bool:
        if c.get("epilogue") != "cshuffle" or c["vec_c"] * warp > c["warp_tile_m"] * c["warp_tile_n"]:
            return False  # several warp tiles per shuffle iteration: not what the rule covers
        x_per_tile = c["wave_n"] * c["warp_tile_n"]  # NPerIterationShuffle
        x1 = min(c["vec_c"], c["warp_tile_m"] * c["warp_tile_n"] // warp)  # min(VecSize, LargestVec)
        x0 = x_per_tile // x1
        y1 = warp // x0
        return x_per_tile % c["vec_c"] != 0 or x0 * y1 != warp

    configs = space.select("full")
    expected = {str(c["name"]) for c in configs if breaks(c)}
    found = {str(c["name"]) for c in configs
             if any(v.rule == "ck-api-2025.11.cshuffle-wavefront" for v in space.check(c) + _off_verdicts(space, c))}
    assert found == expected and len(expected) > 0
    assert "grouped_conv_bwd_weight_fp16_nhwgc_2d_compv1_cshuffle_intrawave_32x128x32_1x4x1_32x32x16_vec8_8_1" in expected


def _off_verdicts(space, config):
    from ckspace.rules.check import violations

    return [v for v in violations(space.model, config, all_families=True) if not v.enabled]


# ---- what verify writes into, what it cannot express, what it measures ------------------------------------------------
WAVELET = "grouped_conv_fwd_fp16_nhwgc_2d_wavelet_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_1"
DEPTHWISE = "grouped_conv_fwd_depthwise_bf16_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8"
CALLED = "CKSPACE_TEST_CALLED"  # the fake compiler appends each unit it compiles to this file
BREAK_LOG = "CKSPACE_TEST_BREAK_LOG"  # and turns this file into a directory (a compile log that cannot take a line)
NO_MATRIX_ENV = "CKSPACE_TEST_NO_MATRIX"  # its assembly of a unit that includes this kernel has no matrix instruction


def _fake_compiler(tmp_path: Path, mib: int = 16) -> list[str]:
    """A stand-in compiler (FAKE_CC) and empty CK headers: the --compiler/--ck-include arguments of verify."""
    import sys

    fake = tmp_path / "fakecc"
    hooks = (f"if os.environ.get('{CALLED}'):\n    open(os.environ['{CALLED}'], 'a').write(src + '\\n')\n"
             f"if os.environ.get('{BREAK_LOG}') and os.path.isfile(os.environ['{BREAK_LOG}']):\n"
             f"    os.remove(os.environ['{BREAK_LOG}'])\n    os.mkdir(os.environ['{BREAK_LOG}'])\n")
    fake.write_text(fake_compiler_script(mib, hooks))
    fake.chmod(0o755)
    (tmp_path / "inc" / "ck_tile").mkdir(parents=True, exist_ok=True)
    return ["--compiler", str(fake), "--ck-include", str(tmp_path / "inc")]


def _names_file(tmp_path: Path, names: list[str]) -> str:
    path = tmp_path / "names.txt"
    path.write_text("\n".join(names) + "\n")
    return str(path)


def test_a_planted_work_symlink_is_refused_and_nothing_is_written_there(tmp_path, capsys):
    space, configs = _kernels("gfx950", 1)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "work").symlink_to(elsewhere)
    args = ["verify", "--arch", "gfx950", "--names", _names_file(tmp_path, [str(configs[0]["name"])]),
            "--ck-api", "2025.11", *_fake_compiler(tmp_path), "-o", str(tmp_path / "v")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ckspace: error: ") and "'work'" in err[0] and "symbolic link" in err[0]
    assert list(elsewhere.iterdir()) == []
    with pytest.raises(CkspaceError, match="symbolic link"):  # the library refuses it the same way
        V.verify(space, configs, tmp_path / "v", revision="2025.11")
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("planted", ["compiles.log", "work/obj", "work/.ckspace", "work/obj/gfx950"])
def test_verify_and_build_refuse_other_planted_symlinks(tmp_path, planted):
    # what verify and build write into besides the work directory: the compile log, ninja's state and the objects
    space, configs = _kernels("gfx950", 1)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = tmp_path / "v"
    (root / planted).parent.mkdir(parents=True, exist_ok=True)
    (root / planted).symlink_to(elsewhere if planted != "compiles.log" else elsewhere / "log")
    fake = _fake_compiler(tmp_path)
    with pytest.raises(CkspaceError, match="symbolic link|outside"):
        V.verify(space, configs, root, revision="2025.11", compiler=fake[1], ck_include=fake[3])
    assert list(elsewhere.iterdir()) == []


def test_unexpressible_kernels_are_reported_and_the_rest_verified(tmp_path, capsys, monkeypatch):
    # CK API 2025.11 has no wavelet pipeline and no depthwise kernel (its rule family ck-api-2025.11 says so): those
    # are reported as such, one line each and a class of their own in JSON, and are never compiled; the other kernel
    # is compiled and passes; exit 1, as not every kernel asked for was verified.
    space, configs = _kernels("gfx950", 1)
    good = str(configs[0]["name"])
    monkeypatch.setenv(CALLED, str(tmp_path / "called"))
    args = ["verify", "--arch", "gfx950", "--names", _names_file(tmp_path, [WAVELET, good, DEPTHWISE]),
            "--ck-api", "2025.11", *_fake_compiler(tmp_path), "-o", str(tmp_path / "v")]
    assert main([*args, "--format", "json"]) == 1
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["counts"] == {"ok": 1, "failed": 0, "no-matrix": 0, "no-launch": 0, "timed-out": 0, "not-run": 0, "unexpressible": 2}
    assert out["compiles"] == 1
    status = {k["name"]: (k["status"], k["error"]) for k in out["kernels"]}
    assert status[good] == ("ok", None)
    assert status[WAVELET][0] == "unexpressible" and "wavelet pipeline" in status[WAVELET][1]
    assert status[DEPTHWISE][0] == "unexpressible" and "depthwise" in status[DEPTHWISE][1]
    assert "template error" not in captured.err and "Traceback" not in captured.err
    assert "compiled all the same" not in captured.err  # they are not compiled at all
    assert [line for line in captured.err.splitlines() if line.startswith("warning: ")] == [
        "warning: 2 kernel(s) cannot be expressed in CK API 2025.11 and are not compiled (reported as "
        "unexpressible, each with the rule)"]
    assert out["warnings"] and not out["proposals"]
    assert (tmp_path / "called").read_text().count("\n") == 1  # one compile: the good kernel's
    assert main(args) == 1  # the text report: a line each (the good kernel's verdict is kept from the first run)
    text = capsys.readouterr().out
    assert "1 ok, 0 failed, 0 not run, 2 unexpressible in CK API 2025.11" in text
    assert f"  UNEXPRESSIBLE {WAVELET}: CK API 2025.11 cannot express it: ck-api-2025.11.pipeline: " in text
    assert f"  UNEXPRESSIBLE {DEPTHWISE}: " in text


def test_gfx1250_with_ck_api_2025_11_is_said_up_front_and_compiles_nothing(tmp_path, capsys, monkeypatch):
    space = Space(arch="gfx1250", rules="+ck-api-2025.11")
    names = [str(c["name"]) for c in space.enumerate(variant="forward", ndim=2, dtype="fp16", where=WHERE)][:2]
    assert len(names) == 2
    monkeypatch.setenv(CALLED, str(tmp_path / "called"))
    args = ["verify", "--arch", "gfx1250", "--names", _names_file(tmp_path, names), "--ck-api", "2025.11",
            *_fake_compiler(tmp_path), "-o", str(tmp_path / "v"), "--format", "json"]
    assert main(args) == 1
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "CK API 2025.11 cannot build for gfx1250" in warnings[0]
    assert "CK_TILE_BUFFER_RESOURCE_3RD_DWORD" in warnings[0]
    out = json.loads(captured.out)
    assert out["counts"] == {"ok": 0, "failed": 0, "no-matrix": 0, "no-launch": 0, "timed-out": 0, "not-run": 0, "unexpressible": 2}
    assert out["compiles"] == 0
    assert all("gfx1250" in k["error"] for k in out["kernels"])
    assert not (tmp_path / "called").exists()


def test_a_relative_output_directory_keeps_each_kernels_peak_memory(tmp_path, capsys, monkeypatch):
    space, configs = _kernels("gfx950", 1)
    fake = _fake_compiler(tmp_path, mib=64)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / ".verify-results.json.abcd1234.tmp").write_text("half")  # what a killed run left
    (tmp_path / "v" / "notes.tmp").write_text("mine")
    args = ["verify", "--arch", "gfx950", "--names", _names_file(tmp_path, [str(configs[0]["name"])]),
            "--ck-api", "2025.11", *fake, "-o", "v", "--format", "json"]
    assert main(args) == 0
    captured = capsys.readouterr()
    (kernel,) = json.loads(captured.out)["kernels"]
    assert kernel["status"] == "ok" and kernel["peak_mib"] is not None and kernel["peak_mib"] >= 64
    assert (tmp_path / "v" / "compiles.log").read_text().count("\n") == 1
    assert "warning" not in captured.err
    assert sorted(p.name for p in (tmp_path / "v").iterdir() if p.name.endswith(".tmp")) == ["notes.tmp"]


@pytest.mark.parametrize("when", ["before the run", "during the compiles"])
def test_a_compile_log_that_cannot_be_written_is_said_once(tmp_path, capsys, monkeypatch, when):
    space, configs = _kernels("gfx950", 3)
    log = tmp_path / "v" / "compiles.log"
    if when == "before the run":
        log.mkdir(parents=True)  # not a file that can take lines
    else:  # the first compile makes it so: the compile wrapper (rusage.py) cannot write its lines
        monkeypatch.setenv(BREAK_LOG, str(log))
    args = ["verify", "--arch", "gfx950", "--names", _names_file(tmp_path, [str(c["name"]) for c in configs]),
            "--ck-api", "2025.11", *_fake_compiler(tmp_path), "-j", "1", "-o", str(tmp_path / "v"),
            "--format", "json"]
    assert main(args) == 0  # the compiles themselves went well
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["counts"]["ok"] == 3 and all(k["peak_mib"] is None for k in out["kernels"])
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 1 and "compiles.log" in warnings[0] and "peak memory" in warnings[0], captured.err
    if when == "during the compiles":
        assert "rusage.py: cannot write" in warnings[0] and "Is a directory" in warnings[0]
    assert out["warnings"] == [warnings[0].removeprefix("warning: ")]


def test_a_kernel_the_revision_writes_but_cannot_compile_is_compiled(tmp_path, capsys, monkeypatch):
    # compv6 renders in CK API 2025.11's templates but the revision's C++ cannot build it (ck-api-2025.11.compv6, a
    # compile fact, not in unexpressible_rules of templates/revisions.toml): verify compiles it, since that is how
    # such a rule is checked again; the wavelet pipeline has no template there and stays unexpressible.
    space, configs = _kernels("gfx950", 1)
    compv6 = str(configs[0]["name"]).replace(f"_{configs[0]['pipeline']}_", "_compv6_")
    assert "ck-api-2025.11.compv6" in {v.rule for v in Space(arch="gfx950", rules="+ck-api-2025.11").check(
        Space(arch="gfx950").parse(compv6))}
    monkeypatch.setenv(CALLED, str(tmp_path / "called"))
    args = ["verify", "--arch", "gfx950", "--names", _names_file(tmp_path, [WAVELET, compv6]), "--ck-api", "2025.11",
            *_fake_compiler(tmp_path), "-o", str(tmp_path / "v"), "--format", "json"]
    main(args)
    out = json.loads(capsys.readouterr().out)
    status = {k["name"]: k["status"] for k in out["kernels"]}
    assert status[WAVELET] == "unexpressible" and status[compv6] == "ok"  # the stand-in compiler builds anything
    assert (tmp_path / "called").read_text().count("\n") == 1


def test_kernels_that_differ_only_in_pads_are_compiled_once(tmp_path, capsys, monkeypatch):
    """pad_m/n/k change the name, not the C++ (tests/test_identical_code.py): of the 4 pad variants of one kernel,
    the first is compiled and the others take its verdict, said in JSON's same_cpp_as; a second run compiles
    nothing, and a new pad variant is answered from the first run's verdict."""
    base = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_32x32x16"
    names = [base + "_pad000", base + "_pad001", base + "_pad010", base + "_pad011"]
    called = tmp_path / "called.txt"
    monkeypatch.setenv(CALLED, str(called))
    fake = _fake_compiler(tmp_path)
    args = ["verify", "--arch", "gfx950", "--rules", "-ck-curation", "--names", _names_file(tmp_path, names),
            "--ck-api", "2025.11", *fake, "-j", "1", "-o", str(tmp_path / "v"), "--format", "json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    kernels = {k["name"]: k for k in out["kernels"]}
    assert {k["status"] for k in kernels.values()} == {"ok"} and out["compiles"] == 1
    assert called.read_text().count("\n") == 1
    assert kernels[names[0]]["same_cpp_as"] is None
    assert [kernels[n]["same_cpp_as"] for n in names[1:]] == [names[0]] * 3
    more = [*names, base + "_pad100"]
    assert main([*args[:6], _names_file(tmp_path, more), *args[7:]]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["compiles"] == 0 and called.read_text().count("\n") == 1
    assert {k["name"]: k["status"] for k in again["kernels"]} == dict.fromkeys(more, "ok")


def test_verify_reports_its_progress_with_rounds_failures_and_time_left(tmp_path):
    """progress(done, total, description) from the first unit that ends: kernels done never go back, the last
    report has every kernel done, and each says the round and the failures (a kernel broken on purpose)."""
    space, configs = _kernels("gfx950", 4)
    fake = tmp_path / "fakecc"
    fake.write_text(fake_compiler_script(16))
    fake.chmod(0o755)
    (tmp_path / "inc" / "ck_tile").mkdir(parents=True)
    seen: list[tuple[int, int, str]] = []
    result = V.verify(space, configs, tmp_path / "v", revision="2025.11", unit_size=2, jobs=1, compiler=str(fake),
                      ck_include=str(tmp_path / "inc"), progress=lambda d, t, s: seen.append((d, t, s)))
    assert {k.status for k in result.kernels} == {"ok"}
    assert seen and [d for d, _, _ in seen] == sorted(d for d, _, _ in seen)
    assert seen[-1][:2] == (4, 4) and all(t == 4 for _, t, _ in seen)
    assert all(s.startswith(f"round ") and "0 failed" in s for _, _, s in seen)
    assert any(" left" in s for d, _, s in seen if 0 < d < 4)  # an estimate while kernels remain


@pytest.mark.parametrize("how", ["the wrapper is missing", "the compiler cannot be started"])
def test_a_compile_that_ran_no_compiler_gives_no_verdict_and_the_next_run_compiles_it(tmp_path, capsys, monkeypatch,
                                                                                   how):
    """A failure is a verdict only where a compiler ran. On the device (session 21) a later call re-copied the tree
    while an audit ran from it, and one compile found no rusage.py: it was recorded as `failed` and kept. Here the
    wrapper is missing for the first run, or the compiler loses its executable bit in its first step (the assembler
    step then cannot start): every kernel is not-run, none is kept, the run says it once, and the next run compiles
    them all."""
    from ckspace.codegen import build as B

    space, configs = _kernels("gfx950", 2)
    fake = _fake_compiler(tmp_path)
    names = _names_file(tmp_path, [str(c["name"]) for c in configs])
    args = ["verify", "--arch", "gfx950", "--names", names, "--ck-api", "2025.11", *fake, "-j", "1",
            "-o", str(tmp_path / "v"), "--format", "json"]
    compiler = Path(fake[1])
    if how == "the wrapper is missing":
        monkeypatch.setattr(B, "MEASURE", tmp_path / "gone" / "rusage.py")
    else:
        working = compiler.read_text()
        compiler.write_text(working.replace("held = bytearray", "os.chmod(sys.argv[0], 0o644)\nheld = bytearray", 1))
    assert main(args) == 1
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert {k["status"] for k in out["kernels"]} == {"not-run"}, out["kernels"]
    assert all(k["error"].startswith("no compiler ran: ") for k in out["kernels"])
    expected = "can't open file" if how == "the wrapper is missing" else "rusage.py: cannot run"
    assert expected in out["kernels"][0]["error"]
    assert out["proposals"] == []  # no rule is proposed from them either
    warnings = [w for w in out["warnings"] if w.startswith("no compiler ran")]
    assert len(warnings) == 1 and expected in warnings[0]
    kept = json.loads((tmp_path / "v" / "verify-results.json").read_text())
    assert kept["kernels"] == {} and "attempts" not in kept
    monkeypatch.undo()
    if how != "the wrapper is missing":
        compiler.write_text(working)
        compiler.chmod(0o755)
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert {k["status"] for k in again["kernels"]} == {"ok"} and not any(k["cached"] for k in again["kernels"])


@pytest.mark.slow
@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_a_stop_mid_round_keeps_the_verdicts_the_round_already_has(tmp_path, monkeypatch, signum):
    """Ctrl-C or SIGTERM to `ckspace verify` in a round: the units it had compiled keep their verdicts and the compile
    it stopped is an attempt, so the next run compiles only that one (verdicts were saved at a round's end alone:
    session 21 lost two finished compiles of 821 s and 174 s to a Ctrl-C). The run is a child process, signalled as a
    terminal or a job runner would."""
    import os
    import signal
    import subprocess
    import sys
    import time

    space, configs, slow, common = _one_slow_compile(tmp_path, monkeypatch, mib=16, kernels=2, slow=1)
    fast = next(str(c["name"]) for c in configs if c["name"] != slow)
    args = ["verify", "--arch", "gfx950", "--names", _names_file(tmp_path, [str(c["name"]) for c in configs]),
            "--ck-api", "2025.11", "--compiler", common["compiler"], "--ck-include", common["ck_include"], "-j", "2",
            "-o", str(tmp_path / "v"), "--format", "json"]
    log = tmp_path / "v" / "compiles.log"
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    child = subprocess.Popen([sys.executable, "-m", "ckspace", *args], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 100
        while time.monotonic() < deadline and not (log.is_file() and "\t0\n" in log.read_text()):
            time.sleep(0.05)
        time.sleep(1.0)  # ninja moves the object into place after the wrapper's line
        child.send_signal(getattr(signal, signum))
        out, err = child.communicate(timeout=60)  # the sleeping compile is stopped, not waited for
    finally:
        child.kill()
    assert child.returncode == 128 + getattr(signal, signum), err
    kept = json.loads((tmp_path / "v" / "verify-results.json").read_text())
    assert [v["status"] for v in kept["kernels"].values()] == ["ok"]
    assert len(kept["attempts"]) == 1  # the stopped compile: tried again last
    monkeypatch.delenv("CKSPACE_TEST_SLOW")
    second = V.verify(space, configs, tmp_path / "v", **common)
    assert {k.name: k.status for k in second.kernels} == {str(c["name"]): "ok" for c in configs}
    assert {k.name for k in second.kernels if k.cached} == {fast} and second.compiles == 1


def test_a_unit_cut_by_a_stop_counts_as_built_only_with_this_rounds_object(tmp_path: Path) -> None:
    """A deadline or Ctrl-C can come after the compile wrapper logged status 0 and renamed the new assembly into
    place, but before ninja moved the new object over the earlier round's: that object must not be read as this
    round's."""
    import os

    obj = "obj/gfx942/grouped_conv_instances_0000.o"
    (tmp_path / obj).parent.mkdir(parents=True)
    o, s = tmp_path / obj, tmp_path / obj.replace(".o", ".s")
    logged_ok, logged_failed, stopped = (100.0, 12.0, 0), (100.0, 12.0, 1), (0.0, 5.0, -15)
    assert not V._built_this_round(tmp_path, obj, logged_ok)  # neither file
    s.write_text("asm")
    assert not V._built_this_round(tmp_path, obj, logged_ok)  # the assembly alone
    o.write_bytes(b"old")
    os.utime(o, (1_000_000, 1_000_000))  # an earlier round's object, then this round's assembly
    os.utime(s, (2_000_000, 2_000_000))
    assert not V._built_this_round(tmp_path, obj, logged_ok)
    os.utime(o, (2_000_001, 2_000_001))  # ninja moved the new object into place
    assert V._built_this_round(tmp_path, obj, logged_ok)
    assert not V._built_this_round(tmp_path, obj, logged_failed)
    assert not V._built_this_round(tmp_path, obj, stopped)
    assert not V._built_this_round(tmp_path, obj, None)  # no line: the compile did not end
