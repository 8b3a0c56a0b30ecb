"""`ckspace emit`: the C++ CK's generator writes, per CK API revision, written safely and incrementally.

- 2026.06 text equals what CK's own generator writes for the same configs (tests/golden, whitespace aside).
- The 2025.11 templates render every kernel that revision can build, and its rule family keeps the others out.
- Writes are atomic and incremental, stay inside DIR, remove only ckspace's own stale files, and a no-op re-emit
  writes nothing. The CLI's exit codes: 2 for bad input (one line), 0 otherwise.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from ckspace import Space
from ckspace.codegen import ckapi
from ckspace.codegen import emit as EM
from ckspace.codegen import manifest as M
from ckspace.rules.check import violations
from ckspace.errors import UsageError
from ckspace.rules.names import parse_name

GOLDEN = Path(__file__).resolve().parent / "golden"


def run_cli(argv: list[str]) -> int:
    from ckspace import cli

    return cli.main(argv)


@pytest.fixture(scope="module")
def gfx950() -> Space:
    return Space(arch="gfx950")


@pytest.fixture(scope="module")
def golden_kernels(gfx950) -> list[dict]:
    names = json.loads((GOLDEN / "2026.06" / "kernels.json").read_text())["kernels"]
    by_name = {k["name"]: k for k in gfx950.enumerate()}
    return [by_name[n] for n in names]


# ---- the 2026.06 revision writes what CK's generator writes -----------------------------------------------------
# tests/golden/2026.06 is CK's own generator's output for kernels.json (scripts/golden_from_seed.py runs the seed;
# tests/golden/README.md). The seed lost its whitespace, so texts are compared as sequences of C++ tokens (words and
# single punctuation characters): whitespace anywhere is irrelevant, but every identifier, number, operator and
# template argument must be the same, and two words glued together are a difference.
CPP_TOKEN = re.compile(r"\w+|\S")


def normalized(text: str) -> str:
    return " ".join(CPP_TOKEN.findall(text))


def golden_differences(out: Path) -> list[str]:
    """The golden files whose text differs from the emitted file of the same path under `out`, whitespace aside."""
    root = GOLDEN / "2026.06"
    return [str(p.relative_to(root)) for p in sorted(root.rglob("*.hpp"))
            if not (out / p.relative_to(root)).is_file()
            or normalized((out / p.relative_to(root)).read_text()) != normalized(p.read_text())]


def test_golden_covers_every_kind(golden_kernels):
    kinds = set()
    for k in golden_kernels:
        if k["variant"] == "forward_depthwise":
            kinds.add("depthwise")
        elif k["variant"] == "bwd_weight" and k["streamk"] != "none":
            kinds.add("stream-K")
        elif k["variant"] == "bwd_weight" and k["two_stage"]:
            kinds.add("two-stage")
        else:
            kinds.add(k["variant"])
    assert kinds == {"forward", "bwd_data", "bwd_weight", "two-stage", "stream-K", "depthwise"}


def test_golden_text(tmp_path, gfx950, golden_kernels):
    EM.emit(gfx950, golden_kernels, tmp_path, revision="2026.06")
    assert len(list((GOLDEN / "2026.06").rglob("*.hpp"))) == 2 * len(golden_kernels) + 4  # + include_all x3, reg.
    assert golden_differences(tmp_path) == [], "differs from CK's generator output"


def test_golden_declarations(tmp_path, gfx950, golden_kernels):
    """The same declarations and template arguments, statement by statement (a finer view of the same check)."""
    EM.emit(gfx950, golden_kernels, tmp_path, revision="2026.06")
    for k in golden_kernels:
        mine = _statements((tmp_path / f"{k['name']}.hpp").read_text())
        ref = _statements((GOLDEN / "2026.06" / f"{k['name']}.hpp").read_text())
        assert mine == ref


def _statements(text: str) -> list[str]:
    text = re.sub(r"//[^\n]*", "", text)
    return [s for s in (normalized(p) for p in re.split(r"[;{}]", text)) if s]


@pytest.fixture
def template_copy(tmp_path, monkeypatch) -> Path:
    """A copy of templates/ that the emitter uses instead of the real one, to be edited by a test."""
    import shutil

    from ckspace.codegen import ckapi

    copy = tmp_path / "templates"
    shutil.copytree(ckapi.templates_dir(), copy)
    monkeypatch.setattr(ckapi, "templates_dir", lambda: copy)
    monkeypatch.setattr(EM, "templates_dir", lambda: copy)
    return copy / "2026.06"


@pytest.mark.parametrize("template, old, new, must_differ", [
    # a template argument: the epilogue's vector size argument 1 -> 2 (forward, bwd_data, bwd_weight kernels)
    ("kernel_gemm.hpp.j2", "Config::VectorSizeC, 1, Config::DoubleSmemBuffer>>;",
     "Config::VectorSizeC, 2, Config::DoubleSmemBuffer>>;", True),
    # a declaration: the depthwise null epilogue's ODataType renamed
    ("kernel_depthwise.hpp.j2", "using ODataType", "using OutputDataType", True),
    # two words glued together: removing this whitespace changes the C++
    ("kernel_gemm.hpp.j2", "using WorkspaceDataType = float;", "usingWorkspaceDataType = float;", True),
    # whitespace only: blank lines, indentation, spaces added and removed
    ("kernel_gemm.hpp.j2", "using WorkspaceDataType = float;", "\n\n        using   WorkspaceDataType=\tfloat ;", False),
])
def test_golden_comparison_can_fail(tmp_path, template_copy, gfx950, golden_kernels, template, old, new, must_differ):
    path = template_copy / template
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    EM.emit(gfx950, golden_kernels, tmp_path / "out", revision="2026.06")
    assert bool(golden_differences(tmp_path / "out")) is must_differ


# ---- 2025.11: templates and the rule family -----------------------------------------------------------------------
def test_families_for_ck_api():
    # 2025.11 switches its own family on and the newest's (on by default) off; the newest needs no switch
    assert ckapi.families_for_ck_api("2025.11") == "+ck-api-2025.11,-ck-api-2026.06"
    assert ckapi.families_for_ck_api("2026.06") == ""
    assert ckapi.families_for_ck_api(None) == ""
    assert ckapi.combine_rules("+ck-archfilter", "2025.11") == "+ck-archfilter,+ck-api-2025.11,-ck-api-2026.06"
    assert ckapi.combine_rules(None, "2026.06") is None
    # a bare list replaces the default set: the other revision's family leaves it, the revision's own joins it
    assert ckapi.combine_rules("arch,pipeline,ck-api-2026.06", "2025.11") == "arch,pipeline,ck-api-2025.11"
    with pytest.raises(UsageError, match="unknown CK API revision"):
        ckapi.families_for_ck_api("2024.01")


@pytest.mark.parametrize("name, rule", [
    ("grouped_conv_bwd_weight_bf16_nhwgc_2d_mem_cshuffle_intrawave_128x16x64_2x1x1_16x16x32_vec8_1_1_explicit_gemm",
     "explicit_gemm needs CK API 2026.06"),
    ("grouped_conv_fwd_bf16_nhwgc_2d_wavelet_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_1",
     "the wavelet pipeline needs CK API 2026.06"),
    ("grouped_conv_fwd_depthwise_bf16_ngchw_2d_14x28_f3_s2x2_p1x1_nb1_sub2x4_vec8_8",
     "depthwise kernels need CK API 2026.06"),
])
def test_explain_messages(gfx950, name, rule):
    found = [v.message for v in violations(gfx950.model, parse_name(name), all_families=True)]
    assert any(m.startswith(rule) for m in found), found


def test_api_family_off_by_default(gfx950):
    assert "ck-api-2025.11" not in gfx950.families
    assert "ck-api-2025.11" in Space(arch="gfx950", rules="+ck-api-2025.11").families


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_2025_selection_excludes_newer_features(arch):
    space = Space(arch=arch, rules=ckapi.families_for_ck_api("2025.11"))
    ks = list(space.enumerate())
    assert ks
    assert not any(k["variant"] == "forward_depthwise" for k in ks)
    gemm = [k for k in ks if k["variant"] != "forward_depthwise"]
    assert not any(k["explicit_gemm"] or k["streamk"] != "none" for k in gemm)
    assert not {k["pipeline"] for k in gemm} & {"wavelet", "basic_async_v1", "compv6"}
    assert {k["variant"] for k in gemm} == {"forward", "bwd_data", "bwd_weight"}
    assert any(k["two_stage"] for k in gemm)


def test_2025_templates_render_everything(tmp_path):
    space = Space(arch="gfx950", rules="+ck-api-2025.11")
    ks = list(space.enumerate())
    res = EM.emit(space, ks, tmp_path, revision="2025.11", chunk_size=500)
    assert res.kernels == len(ks)
    text = (tmp_path / f"{ks[0]['name']}.hpp").read_text()
    assert "ExplicitGemm>" not in text and "GroupedConvUniversalPipelineAgBgCrPolicy" not in text
    two_stage = next(k for k in ks if k["variant"] == "bwd_weight" and k["two_stage"])
    body = (tmp_path / f"{two_stage['name']}.hpp").read_text()
    assert "memory_operation_enum::atomic_add" in body and "ElementWiseKernel" in body


def test_revision_detection(tmp_path):
    def tree(root: Path, files: dict[str, str]) -> Path:
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        return root

    utils = "ck_tile/ops/grouped_convolution/utils/grouped_convolution_utils.hpp"
    old = tree(tmp_path / "old", {
        utils: "template <index_t NDimSpatial_, bool EnableSplitImage_ = false> struct GroupedConvTraits;",
        "ck_tile/ops/gemm/pipeline/gemm_pipeline_problem.hpp": "bool HasHotLoop_ = true, TailNumber TailNum_",
        "ck_tile/ops/epilogue/cshuffle_epilogue.hpp": "memory_operation_enum MemoryOperation_,",
    })
    new = tree(tmp_path / "new", {
        utils: "bool EnableSplitImage_ = false, bool ExplicitGemm_ = false",
        "ck_tile/ops/grouped_convolution/pipeline/grouped_conv_universal_pipeline_ag_bg_cr_policy.hpp": "",
    })
    assert ckapi.resolve_revision("auto", old) == "2025.11"
    assert ckapi.resolve_revision("auto", new) == "2026.06"
    assert ckapi.resolve_revision(None) == "2026.06"
    with pytest.raises(UsageError, match="--ck-include"):
        ckapi.resolve_revision("auto", None)
    with pytest.raises(UsageError, match="no known revision"):
        ckapi.resolve_revision("auto", tree(tmp_path / "other", {utils: "ExplicitGemm"}))


# ---- the emitted directory ----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small(gfx950) -> list[dict]:
    """A small selection with every direction, depthwise, two-stage and stream-K."""
    ks = list(gfx950.enumerate(where="tile_m == 128 and tile_n == 128 and tile_k == 64"))
    dw = list(gfx950.enumerate(variant="forward_depthwise"))[:3]
    return ks[:40] + dw


def test_layout_and_manifest(tmp_path, gfx950, small):
    res = EM.emit(gfx950, small, tmp_path, chunk_size=16)
    data = json.loads((tmp_path / "manifest.json").read_text())
    assert data["ck_api"] == "2026.06" and data["arch"] == "gfx950"
    assert set(data["kernels"]) == {k["name"] for k in small}
    assert len(data["units"]) == res.units.__len__() == -(-len(small) // 16)
    for name, entry in data["kernels"].items():
        header = tmp_path / f"{name}.hpp"
        assert entry["digest"] == M.digest(header.read_bytes())
        assert entry["files"][0] == f"{name}.hpp"
        assert entry["unit"] in data["units"] and name in data["units"][entry["unit"]]
        assert all((tmp_path / f).is_file() for f in entry["files"])
        assert entry["fields"]["variant"] == next(k["variant"] for k in small if k["name"] == name)
    for rel, digest in data["files"].items():
        assert M.digest((tmp_path / rel).read_bytes()) == digest
    # registration: chunks per direction, the top-level register_all, counts in the header
    groups = {"fwd": 0, "bwd_data": 0, "bwd_weight": 0}
    for k in small:
        groups[EM.REG_GROUP[k["variant"]]] += 1
    for g, n in groups.items():
        chunks = sorted(tmp_path.glob(f"register_{g}_chunk_*.cpp"))
        assert len(chunks) == -(-n // 16)
        body = (tmp_path / "dispatcher_wrappers" / "register_all_grouped_conv_kernels.hpp").read_text()
        assert f"get_grouped_conv_{g}_kernel_count() {{ return {n}; }}" in body
    top = (tmp_path / "register_all_grouped_conv_kernels.cpp").read_text()
    assert "void register_all_grouped_conv_kernels(GroupedConvRegistry& registry, const std::string& arch)" in top
    first_unit = next(iter(data["units"]))
    unit = (tmp_path / first_unit).read_text()
    assert unit.count("_launch(") == unit.count("#include") == len(data["units"][first_unit])
    ninja = (tmp_path / "build.ninja").read_text()
    assert "include toolchain.ninja" in ninja and "$out.tmp && mv -f $out.tmp $out" in ninja
    assert "$$CKSPACE_LAUNCHER $cxx" in ninja
    assert ninja.count("build obj/gfx950/") == len(data["units"])


def test_noop_reemit_writes_nothing(tmp_path, gfx950, small):
    EM.emit(gfx950, small, tmp_path, chunk_size=16)
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    res = EM.emit(gfx950, small, tmp_path, chunk_size=16)
    assert res.stats.written == 0 and res.stats.removed == 0
    assert res.stats.unchanged == len(stamps) - 1  # every file but manifest.json
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == stamps


def test_stale_files_removed_foreign_files_kept(tmp_path, gfx950, small):
    EM.emit(gfx950, small, tmp_path, chunk_size=16)
    foreign = tmp_path / "NOTES.txt"
    foreign.write_text("mine")
    (tmp_path / "units" / "my_extra.cpp").write_text("// mine")
    dropped = small[0]["name"]
    edited = small[1]["name"]
    (tmp_path / f"{edited}.hpp").write_text("// edited by hand\n")
    res = EM.emit(gfx950, small[2:], tmp_path, chunk_size=16)
    assert not (tmp_path / f"{dropped}.hpp").exists()
    assert not (tmp_path / "dispatcher_wrappers" / f"dispatcher_wrapper_{dropped}.hpp").exists()
    assert (tmp_path / f"{edited}.hpp").read_text() == "// edited by hand\n"  # stale, but edited: kept
    assert res.stats.kept_edited == [f"{edited}.hpp"]
    assert foreign.read_text() == "mine" and (tmp_path / "units" / "my_extra.cpp").is_file()
    data = json.loads((tmp_path / "manifest.json").read_text())
    assert dropped not in data["kernels"] and f"{dropped}.hpp" not in data["files"]


def test_changed_kernel_rewritten_atomically(tmp_path, gfx950):
    ks = list(gfx950.enumerate(variant="forward", where="pipeline == 'compv3'"))[:3]
    EM.emit(gfx950, ks, tmp_path, revision="2026.06")
    name = ks[0]["name"]
    before = (tmp_path / f"{name}.hpp").read_text()
    old_space = Space(arch="gfx950", rules="+ck-api-2025.11")
    res = EM.emit(old_space, ks, tmp_path, revision="2025.11")
    after = (tmp_path / f"{name}.hpp").read_text()
    assert res.stats.written > 0 and before != after and "TailNumber TailNum" in after
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]


def test_revision_needs_its_rules(tmp_path, gfx950, small):
    with pytest.raises(UsageError, match="ck-api-2025.11"):
        EM.emit(gfx950, small[:2], tmp_path, revision="2025.11")


@pytest.mark.parametrize("bad", ["../evil", "a/../../b", "/etc/passwd", "x\\y", "", "a//b", "./x"])
def test_paths_stay_inside(tmp_path, bad):
    w = M.Writer(tmp_path)
    with pytest.raises(UsageError):
        w.write(bad, "x")


def test_symlinked_dir_outside_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "out"
    root.mkdir()
    (root / "dispatcher_wrappers").symlink_to(outside)
    w = M.Writer(root)
    with pytest.raises(UsageError, match="outside"):
        w.write("dispatcher_wrappers/x.hpp", "x")
    assert not list(outside.iterdir())


def _listing(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


class _Stop(KeyboardInterrupt):
    """What Ctrl-C or SIGTERM raises in the CLI (ckspace.signals), here at a chosen write."""


@pytest.mark.parametrize("after", [0, 1, 7, 30])
def test_an_interrupted_emit_leaves_a_record_and_the_next_emit_removes_its_files(tmp_path, gfx950, small,
                                                                                  monkeypatch, after):
    # Selection A emitted whole, then selection B stopped after `after` writes, then selection C: the directory must
    # hold exactly what an emit of C alone writes, plus the files ckspace did not write (and one it wrote but a user
    # has edited since), untouched.
    a, b, c = small[:5], small[5:25], small[25:30]
    fresh = tmp_path / "fresh"
    EM.emit(gfx950, c, fresh, chunk_size=4)
    out = tmp_path / "out"
    EM.emit(gfx950, a, out, chunk_size=4)
    mine = {"NOTES.txt": "mine", "units/my_extra.cpp": "// mine", ".hidden.tmp": "mine too"}
    for rel, text in mine.items():
        (out / rel).write_text(text)
    real_write = M.atomic_write
    count = [0]

    def stopping_write(path, data, mode=0o644):
        if count[0] == after:
            raise _Stop
        count[0] += 1
        real_write(path, data, mode)

    monkeypatch.setattr(M, "atomic_write", stopping_write)
    with pytest.raises(_Stop):
        EM.emit(gfx950, b, out, chunk_size=4)
    monkeypatch.setattr(M, "atomic_write", real_write)
    written_by_b = {f"{k['name']}.hpp" for k in b} & _listing(out)
    assert len(written_by_b) == (after + 1) // 2  # a header and a wrapper per kernel, in order
    edited = None
    if written_by_b:  # a file the stopped emit wrote, edited by hand since: no longer ckspace's to remove
        edited = sorted(written_by_b)[0]
        (out / edited).write_text("// edited by hand\n")
    res = EM.emit(gfx950, c, out, chunk_size=4)
    expected = _listing(fresh) | set(mine) | ({edited} if edited else set())
    assert _listing(out) == expected
    assert all((out / rel).read_text() == text for rel, text in mine.items())
    if edited:
        assert (out / edited).read_text() == "// edited by hand\n"
    assert all((out / rel).read_bytes() == (fresh / rel).read_bytes() for rel in _listing(fresh))
    assert res.stats.removed > 0 and not (out / M.PENDING).exists()


def test_a_journal_entry_never_removes_a_file_ckspace_did_not_write(tmp_path, gfx950, small):
    # The journal names a path and the digest of what was to be written there: a file of other content at that
    # path (the user's, or the old one the stopped write never replaced) stays.
    out = tmp_path / "out"
    EM.emit(gfx950, small[:3], out)
    (out / "theirs.hpp").write_text("// the user's\n")
    (out / M.PENDING).write_text(json.dumps([M.digest("// what ckspace meant to write\n"), "theirs.hpp"]) + "\n"
                                 + '["broken' + "\n" + json.dumps([M.digest("x"), "../outside.txt"]) + "\n")
    (tmp_path / "outside.txt").write_text("x")
    EM.emit(gfx950, small[3:5], out)
    assert (out / "theirs.hpp").read_text() == "// the user's\n" and (tmp_path / "outside.txt").read_text() == "x"
    assert not (out / M.PENDING).exists()


def test_an_interrupted_atomic_write_leaves_no_temporary(tmp_path, monkeypatch):
    # Ctrl-C or SIGTERM can land the moment the temporary has been created, before the writer has it in hand.
    real_open = os.open

    def open_then_interrupted(path, flags, *args, **kwargs):
        fd = real_open(path, flags, *args, **kwargs)
        if str(path).endswith(".tmp"):
            os.close(fd)
            raise KeyboardInterrupt
        return fd

    monkeypatch.setattr(os, "open", open_then_interrupted)
    with pytest.raises(KeyboardInterrupt):
        M.atomic_write(tmp_path / "f.txt", b"data")
    monkeypatch.setattr(os, "open", real_open)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_an_interrupted_write_of_a_writer_leaves_no_temporary(tmp_path, monkeypatch):
    def interrupted(fd, mode):
        raise KeyboardInterrupt

    w = M.Writer(tmp_path)
    monkeypatch.setattr(os, "fchmod", interrupted)
    with pytest.raises(KeyboardInterrupt):
        w.write("a.hpp", "text")
    monkeypatch.undo()
    w.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == [M.PENDING]  # the record of what it was writing


@pytest.mark.parametrize("name", ["../../etc/x", "a/b", "grouped conv", "x;rm", "ünï"])
def test_kernel_names_are_identifiers(gfx950, small, name):
    cfg = {**small[0], "name": name}
    with pytest.raises(UsageError, match="C\\+\\+ identifier"):
        EM.kernel_context(cfg, "gfx950", lambda c: 1)


def test_manifest_pointing_outside_is_ignored(tmp_path, gfx950, small):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    out = tmp_path / "out"
    EM.emit(gfx950, small[:3], out)
    data = json.loads((out / "manifest.json").read_text())
    data["files"]["../victim.txt"] = M.digest(b"keep")
    (out / "manifest.json").write_text(json.dumps(data))
    EM.emit(gfx950, small[:3], out)
    assert victim.read_text() == "keep"


# ---- the CLI --------------------------------------------------------------------------------------------------------
def test_cli_emit(tmp_path, capsys):
    out = tmp_path / "o"
    rc = run_cli(["emit", "--arch", "gfx942", "--variant", "bwd_data", "--dtype", "fp32", "--ndim", "2",
                  "--where", "tile_m == 64", "-o", str(out), "--ck-api", "2025.11", "--chunk-size", "4"])
    assert rc == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("emitted ") and "CK API 2025.11" in line
    data = json.loads((out / "manifest.json").read_text())
    assert data["ck_api"] == "2025.11" and "ck-api-2025.11" in data["rules"]
    rc = run_cli(["emit", "--arch", "gfx942", "--variant", "bwd_data", "--dtype", "fp32", "--ndim", "2",
                  "--where", "tile_m == 64", "-o", str(out), "--ck-api", "2025.11", "--chunk-size", "4"])
    assert rc == 0 and " 0 written," in capsys.readouterr().out


@pytest.mark.parametrize("argv, fragment", [
    (["--ck-api", "1999.01"], "unknown CK API revision"),
    (["--chunk-size", "0"], "--chunk-size"),
    (["--where", "bogus_field == 1"], "bogus_field"),
    (["--set", "nonexistent"], "nonexistent"),
])
def test_cli_emit_bad_input(tmp_path, capsys, argv, fragment):
    rc = run_cli(["emit", "--arch", "gfx950", "-o", str(tmp_path / "o"), *argv])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and fragment in err and len(err.splitlines()) == 1 and err.startswith("ckspace: error:")


def test_cli_emit_unwritable_dir(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    for target in (blocker, blocker / "sub", Path("/proc/ckspace-out")):
        rc = run_cli(["emit", "--arch", "gfx950", "--variant", "forward_depthwise", "-o", str(target)])
        err = capsys.readouterr().err.strip()
        assert rc == 2, target
        assert len(err.splitlines()) == 1 and err.startswith("ckspace: error:") and "Traceback" not in err


def test_cli_arch_auto_without_gpu(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "hip", None)  # hip-python absent
    rc = run_cli(["emit", "--arch", "auto", "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "--arch" in err and len(err.splitlines()) == 1


def test_set_tiny(tmp_path, capsys):
    rc = run_cli(["emit", "--arch", "gfx950", "--set", "tiny", "-o", str(tmp_path / "o"), "--ck-api", "2025.11"])
    assert rc == 0
    data = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert data["kernels"] and data["selection"]["set"] == "tiny"


# ---- enumerate --ck-api, and the CLI's start-up ---------------------------------------------------------------------
def test_enumerate_ck_api_lists_what_the_revision_builds(capsys):
    """`enumerate --ck-api 2025.11` = the default set minus what the plain-Python checker says the family rejects."""
    from ckspace.rules.model import Model, resolve_families

    argv = ["enumerate", "--arch", "gfx950", "--variant", "bwd_weight", "--ndim", "2", "--dtype", "bf16",
            "--format", "names"]
    assert run_cli(argv) == 0
    full = capsys.readouterr().out.split()
    assert run_cli([*argv, "--ck-api", "2025.11"]) == 0
    listed = capsys.readouterr().out.split()
    space = Space(arch="gfx950")
    api = Model(space.data, "gfx950", resolve_families(space.data, "ck-api-2025.11"))
    api_rules = [r for r in api.rules_for("gemm") if r.family == "ck-api-2025.11"]
    from ckspace.rules.check import breaks

    expected = [n for n in full if not any(breaks(r, parse_name(n), api) for r in api_rules)]
    assert listed == expected and 0 < len(listed) < len(full)
    assert run_cli([*argv, "--ck-api", "2026.06"]) == 0
    assert capsys.readouterr().out.split() == full  # the newest revision builds everything


def test_enumerate_ck_api_bad_input(capsys):
    for argv, fragment in ((["--ck-api", "2024.01"], "unknown CK API revision"),
                           (["--ck-api", "auto"], "--ck-include"),
                           (["--ck-include", "/nonexistent"], "--ck-api auto")):
        assert run_cli(["enumerate", "--arch", "gfx950", "--count", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert fragment in err and len(err.splitlines()) == 1


def test_cached_enumerate_imports_nothing_heavy(tmp_path):
    """A cached enumerate (with or without --ck-api) imports neither OR-Tools, jinja2 nor the emit/build modules."""
    import subprocess

    code = (
        "import sys, io, contextlib\n"
        "from ckspace.cli import main\n"
        "argv = ['enumerate', '--arch', 'gfx950', '--variant', 'forward', '--ndim', '2', '--dtype', 'fp32', '--ck-api', sys.argv[1]]\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(argv) == 0\n"
        "heavy = ('ortools', 'jinja2', 'ninja', 'ckspace.codegen.emit', 'ckspace.codegen.build', 'ckspace.codegen.toolchain', 'ckspace.codegen.manifest')\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith(heavy))))\n"
    )
    env = {**os.environ, "CKSPACE_CACHE_DIR": str(tmp_path)}
    for rev in ("2026.06", "2025.11"):
        subprocess.run([sys.executable, "-c", code, rev], env=env, check=True, capture_output=True)  # fills the cache
        cached = subprocess.run([sys.executable, "-c", code, rev], env=env, check=True, capture_output=True, text=True)
        assert cached.stdout.split() == [], rev


def test_cli_constants_match_the_modules():
    """cli_build keeps copies so that building the parser imports neither ckspace.codegen.emit nor ckspace.codegen.build."""
    from ckspace.codegen import build as B
    from ckspace.cli import build as cli_build

    from ckspace.codegen import units

    assert cli_build.DEFAULT_CHUNK_SIZE == EM.DEFAULT_CHUNK_SIZE == units.DEFAULT_CHUNK_SIZE
    assert cli_build.MIN_UNITS == units.MIN_UNITS
    assert cli_build.LAUNCHERS == B.LAUNCHERS


# ---- the golden files come from CK's generator ------------------------------------------------------------------
def _golden_script():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    try:
        import golden_from_seed
    finally:
        sys.path.pop(0)
    return golden_from_seed


GFS = _golden_script()
SEEDS = Path(os.environ.get("CKSPACE_SEEDS", GFS.DEFAULT_SEEDS))


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"CK's generator text (the seeds, {SEEDS}) is not on this machine, "
                    "e.g. in CI: the committed golden files are still checked against the emitter above")
def test_golden_files_come_from_the_seed(capsys):
    """scripts/golden_from_seed.py --check: the re-indented seed, run on kernels.json, writes exactly these files."""
    assert GFS.main(["--check", "--seeds", str(SEEDS)]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("q", ['"""', 'f"""'])  # f-strings are several tokens from Python 3.12 on
def test_reindent_verifier(q):
    """The re-indentation check refuses anything but indentation outside strings (no seed needed)."""
    lines = ["def f():", f"return {q}a", f"b{q[-3:]}"]
    GFS.verify_reindented(f"def f():\n    return {q}a\nb{q[-3:]}\n", lines, [0, 1, 0])
    with pytest.raises(GFS.SeedError, match="inside a string"):  # would change the string's content
        GFS.verify_reindented(f"def f():\n    return {q}a\n    b{q[-3:]}\n", lines, [0, 1, 1])
    with pytest.raises(GFS.SeedError, match="not the seed's line"):
        GFS.verify_reindented(f"def f():\n    return {q}A\nb{q[-3:]}\n", lines, [0, 1, 0])
    with pytest.raises(GFS.SeedError, match="does not compile: line 2"):
        GFS.verify_reindented(f"def f():\nreturn {q}a\nb{q[-3:]}\n", lines, [0, 0, 0])


def test_indent_map_covers_the_seed_once():
    imap = GFS.load_indent_map()
    assert len(GFS.depths(imap)) == imap["lines"] and set(GFS.depths(imap)) <= set(range(8))


def test_emit_of_tiny_has_sixteen_units_by_default(tmp_path):
    from ckspace.cli import main

    assert main(["emit", "--arch", "gfx950", "--set", "tiny", "-o", str(tmp_path / "o")]) == 0
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert len(manifest["units"]) == 16 and sum(len(u) for u in manifest["units"].values()) == 22
    assert main(["emit", "--arch", "gfx950", "--set", "tiny", "--chunk-size", "1000", "-o", str(tmp_path / "p")]) == 0
    assert len(json.loads((tmp_path / "p" / "manifest.json").read_text())["units"]) == 1
