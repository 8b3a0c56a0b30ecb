"""The scripts under scripts/ keep up with the package: every `ckspace` import they make, also inside the code
they run in a child process, names a module and a name that exist (bench_emit once imported ckspace.codegen.emit after it
moved to ckspace.codegen.emit)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parent.parent / "scripts").glob("*.py"))


def _imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ckspace") and node.level == 0:
            yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ckspace"):
                    yield alias.name, []
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "import" in node.value:
            try:  # code run in a child process (`python -c CHILD`)
                inner = ast.parse(node.value)
            except SyntaxError:
                continue
            yield from _imports(inner)


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_ckspace_import_of_a_script_resolves(script: Path) -> None:
    for module, names in _imports(ast.parse(script.read_text())):
        mod = importlib.import_module(module)
        for name in names:
            assert hasattr(mod, name) or importlib.util.find_spec(f"{module}.{name}") is not None, \
                f"{script.name}: from {module} import {name}"


def test_the_child_code_of_bench_emit_is_checked() -> None:
    script = next(s for s in SCRIPTS if s.name == "bench_emit.py")
    assert ("ckspace.codegen", ["emit"]) in list(_imports(ast.parse(script.read_text())))


def test_merge_audit_adds_a_round_and_recomputes_the_verdicts(tmp_path: Path) -> None:
    """scripts/merge_audit.py: a verify --audit JSON and its plan become a round; accepted_now is recomputed for every
    round from the facts (a fact-valid kernel is accepted, one breaking arch.tile-m-divisible is not)."""
    import json
    import subprocess
    import sys

    valid = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_8"
    broken = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_224x256x64_2x2x1_32x32x16_vec8_8_8"
    data = tmp_path / "audit.json"
    data.write_text(json.dumps({"doc": "test", "rounds": {"1": {"gfx950": {"kernels": {
        broken: {"status": "failed", "error": "e", "accepted_now": True}}, "sections": []}}}}))
    (tmp_path / "plan-gfx950.txt").write_text(f"# a plan\n# audit: uniform\n{valid}\n# audit: near-miss arch.x\n"
                                             f"{broken}\n")
    (tmp_path / "gfx950.json").write_text(json.dumps({"audit": {"sections": []}, "verify": {"kernels": [
        {"name": valid, "status": "ok", "error": None, "isa": {"lds_bytes": 36864}, "lds_model": 36864},
        {"name": broken, "status": "failed", "error": "static assertion failed"},
        {"name": "grouped_conv_x", "status": "not-run", "error": None}]}}))
    script = SCRIPTS[0].parent / "merge_audit.py"
    proc = subprocess.run([sys.executable, str(script), str(data), "2", str(tmp_path / "gfx950.json")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    rounds = json.loads(data.read_text())["rounds"]
    new = rounds["2"]["gfx950"]
    assert set(new["kernels"]) == {valid, broken}  # not-run kernels are left out
    # lds_model is the run's figure, kept; lds_model_now this checkout's: the fp16 A and B tiles, (128 + 128) * 64 * 2
    # bytes, larger than the CShuffle epilogue's tile
    assert new["kernels"][valid] == {"status": "ok", "error": None, "lds": 36864, "lds_model": 36864,
                                     "accepted_now": True, "broken_now": [], "lds_model_now": 32768}
    assert new["kernels"][broken]["accepted_now"] is False
    assert new["kernels"][broken]["broken_now"] == ["arch.tile-m-divisible"]
    assert rounds["1"]["gfx950"]["kernels"][broken]["accepted_now"] is False  # recomputed, not kept
    assert new["sections"] == [{"kind": "uniform", "detail": "", "names": [valid]},
                               {"kind": "near-miss", "detail": "arch.x", "names": [broken]}]
    # the summary: round 2 is no precision round, so no draw counts; each broken kernel is a near miss of its rule
    out = tmp_path / "evidence" / "audit.json"
    proc = subprocess.run([sys.executable, str(script), str(data), "--summary", str(out)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(out.read_text())
    assert summary["archs"]["gfx950"]["uniform"] == {"compiled": 0, "built": 0}
    assert summary["archs"]["gfx950"]["confusion"] == {"accepted_built": 1, "accepted_failed": 0,
                                                      "rejected_built": 0, "rejected_failed": 2}
    assert summary["archs"]["gfx950"]["lds"] == {"accepted_built": 1, "model_equal": 0}  # 36,864 is not 32,768
    assert summary["rules"] == {"arch.tile-m-divisible": {"gfx950": {"compiled": 2, "failed": 2}}}


def test_audit_plan_rest_keeps_the_sections_and_the_kernels_without_a_verdict(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "scripts" / "audit_plan_rest.py"
    plan = tmp_path / "plan.txt"
    text = ("# ckspace verify --audit plan: x\n# audit: uniform\n#   drawn from 10 kernel(s)\nk3\nk1\nk2\n"
            "# audit: stratified variant\nk5\nk4\n")
    plan.write_text(text)
    run_a = tmp_path / "a.json"
    run_a.write_text(json.dumps({"verify": {"kernels": [{"name": "k3", "status": "ok"},
                                                        {"name": "k1", "status": "not-run"},
                                                        {"name": "k5", "status": "failed"}]}}))
    run_b = tmp_path / "b.json"
    run_b.write_text(json.dumps({"verify": {"kernels": [{"name": "k1", "status": "timed-out"},
                                                        {"name": "k4", "status": "no-matrix"}]}}))
    out = tmp_path / "rest.txt"
    done = subprocess.run([sys.executable, str(script), str(plan), str(run_a), str(run_b), "-o", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.read_text() == ("# ckspace verify --audit plan: x\n# audit: uniform\n#   drawn from 10 kernel(s)\n"
                               "k1\nk2\n# audit: stratified variant\n")
    assert "3 of 5 kernel(s) have a verdict; 2 left" in done.stdout
    same = subprocess.run([sys.executable, str(script), str(plan), str(run_a), "-o", str(plan)],
                          capture_output=True, text=True)
    assert same.returncode == 2 and plan.read_text() == text  # the plan itself is never overwritten


def test_audit_round_rest_writes_the_rest_of_a_round_and_moves_its_holes_last(tmp_path: Path) -> None:
    """scripts/audit_round_rest.py: a round of the data file becomes a plan of its kernels without a verdict, in the
    plan's order per section; with --holes-last, those before a section's last verdict go to its end."""
    import json
    import subprocess
    import sys

    from ckspace.select.audit import parse

    script = Path(__file__).resolve().parent.parent / "scripts" / "audit_round_rest.py"
    data = tmp_path / "audit.json"
    data.write_text(json.dumps({"rounds": {"6": {"gfx950": {
        "kernels": {"k2": {"status": "ok"}, "k3": {"status": "failed"}, "k8": {"status": "no-matrix"}},
        "sections": [{"kind": "uniform", "detail": "", "names": ["k1", "k2", "k3", "k4", "k5"]},
                     {"kind": "stratified", "detail": "variant,ndim", "names": ["k6", "k7", "k8"]}]}}}}))
    out = tmp_path / "rest.txt"

    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(script), str(data), "6", "gfx950", "-o", str(out), *extra],
                              capture_output=True, text=True)

    done = run()
    assert done.returncode == 0, done.stderr
    assert "3 of 8 kernel(s) have a verdict; 5 left" in done.stdout
    plan = parse(out.read_text().splitlines(), "rest")
    assert plan is not None
    assert [(s.kind, s.detail, s.names) for s in plan.sections] == [
        ("uniform", "", ["k1", "k4", "k5"]), ("stratified", "variant,ndim", ["k6", "k7"])]
    assert run("--holes-last").returncode == 0
    plan = parse(out.read_text().splitlines(), "rest")
    assert plan is not None
    assert [s.names for s in plan.sections] == [["k4", "k5", "k1"], ["k6", "k7"]]
    before = out.read_bytes()
    bad = subprocess.run([sys.executable, str(script), str(data), "5", "gfx950", "-o", str(out)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no round '5'" in bad.stderr and "Traceback" not in bad.stderr
    assert out.read_bytes() == before


def test_merge_audit_add_joins_later_runs_to_a_round_and_refuses_contradictions(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    valid = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_16x16x32_vec8_8_8"
    other = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x32_2x2x1_16x16x32_vec8_8_8"
    data = tmp_path / "audit.json"
    sections = [{"kind": "uniform", "detail": "", "names": [other, valid]}]
    data.write_text(json.dumps({"doc": "test", "rounds": {"6": {"gfx950": {"kernels": {
        other: {"status": "ok", "error": None, "lds": 24576, "lds_model": 24576}}, "sections": sections}}}}))
    run = tmp_path / "runs" / "v-gfx950.json"  # as the device brings it back; no plan beside it: --add keeps its own
    run.parent.mkdir()
    run.write_text(json.dumps({"verify": {"kernels": [
        {"name": valid, "status": "ok", "error": None, "isa": {"lds_bytes": 32768}, "lds_model": 32768},
        {"name": other, "status": "ok", "error": None, "isa": {"lds_bytes": 24576}, "lds_model": 24576},
        {"name": "grouped_conv_x", "status": "timed-out", "error": None}]}}))
    script = Path(__file__).resolve().parent.parent / "scripts" / "merge_audit.py"
    proc = subprocess.run([sys.executable, str(script), str(data), "6", "--add", str(run)], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    entry = json.loads(data.read_text())["rounds"]["6"]["gfx950"]
    assert entry["sections"] == sections
    assert set(entry["kernels"]) == {valid, other}
    assert entry["kernels"][valid]["lds"] == 32768 and entry["kernels"][valid]["accepted_now"] is True
    kept = data.read_bytes()
    # a verdict that contradicts the round's, and a kernel outside its plan: an error, and the file is unchanged
    for kernels, message in (([{"name": other, "status": "failed", "error": "e"}], "was ok and is now failed"),
                             ([{"name": "grouped_conv_y", "status": "ok", "error": None}], "not in round 6's plan")):
        run.write_text(json.dumps({"verify": {"kernels": kernels}}))
        proc = subprocess.run([sys.executable, str(script), str(data), "6", "--add", str(run)], capture_output=True,
                              text=True)
        assert proc.returncode == 1 and message in proc.stderr, proc.stderr
        assert data.read_bytes() == kept


@pytest.mark.slow
def test_the_device_scripts_pack_start_wait_and_merge_a_round(tmp_path: Path) -> None:
    """scripts/device: pack.sh packs a registry toolchain (here a stand-in compiler in a toolchain.json of its own) and
    the rest of a round; start.sh unpacks the toolchain where it was (deleted here first) and runs the audit in the
    background from its own copy of the code; wait.sh waits for it and brings back its report, which merge_audit.py
    --add joins to the round. One kernel of the round already has its verdict and is not compiled again."""
    import json
    import os
    import shutil
    import subprocess
    import sys
    import tarfile

    from ckspace.codegen.toolchain import RECIPE
    from test_verify import _kernels, fake_compiler_script

    root = Path(__file__).resolve().parent.parent
    repo = tmp_path / "repo"  # what the device machine gets: the tree, and .device/pack carried
    repo.mkdir()
    for part in ("ckspace", "constraints", "objectives", "templates", "pyproject.toml", "scripts"):
        (repo / part).symlink_to(root / part)
    tc = tmp_path / "tc"
    for part in ("zig", "bin", "ck/ck_tile", "hip", "sysroot", "zres"):
        (tc / part).mkdir(parents=True)
    fake = tc / "bin" / "hipclang-zig"
    fake.write_text(fake_compiler_script())
    fake.chmod(0o755)
    (tc / "toolchain.json").write_text(json.dumps({"recipe": RECIPE, "ck_include": str(tc / "ck"),
                                                   "compilers": {"gfx950": [str(fake)]}}))
    _, configs = _kernels("gfx950", 3)
    names = [str(c["name"]) for c in configs]
    data = tmp_path / "audit.json"
    data.write_text(json.dumps({"doc": "test", "rounds": {"6": {"gfx950": {
        "kernels": {names[0]: {"status": "ok", "error": None, "lds": 1024, "lds_model": 1024}},
        "sections": [{"kind": "uniform", "detail": "", "names": names}]}}}}))
    env = {**os.environ, "CKSPACE_TOOLCHAIN_DIR": str(tc), "ARCHS": "gfx950", "RUNS": str(tmp_path / "runs"),
           "OUT": str(tmp_path / "out"), "JOBS": "2", "BUDGET": "120", "WAIT": "120"}
    (tmp_path / "runs").mkdir()

    def sh(script: str, *args: str) -> str:
        done = subprocess.run(["bash", f"scripts/device/{script}", *args], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    assert "1 of 3 kernel(s) have a verdict; 2 left" in sh("pack.sh", str(data), "6")
    assert (repo / ".device" / "pack" / "tcdir").read_text().strip() == str(tc.resolve())
    shutil.rmtree(tc)  # the device machine starts bare: start.sh unpacks the toolchain to the same path
    assert "gfx950: started" in sh("start.sh")
    assert fake.is_file() and os.access(fake, os.X_OK)
    waited = sh("wait.sh")
    assert "DONE" in waited and "gfx950: 2 verdict(s) {'ok': 2}" in waited, waited
    with tarfile.open(tmp_path / "out" / "results.tgz") as tar:
        tar.extractall(tmp_path / "back")
    report = json.loads((tmp_path / "back" / "v-gfx950.json").read_text())
    assert {k["name"]: k["status"] for k in report["verify"]["kernels"]} == {n: "ok" for n in names[1:]}
    merged = subprocess.run([sys.executable, str(root / "scripts" / "merge_audit.py"), str(data), "6", "--add",
                             str(tmp_path / "back" / "v-gfx950.json")], capture_output=True, text=True)
    assert merged.returncode == 0, merged.stderr
    entry = json.loads(data.read_text())["rounds"]["6"]["gfx950"]
    assert set(entry["kernels"]) == set(names) and entry["kernels"][names[0]]["lds"] == 1024


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def _tiny_report(arch: str, kernels: list[tuple[str, str]]) -> str:
    """A verify report as `ckspace verify --format json` writes it (the fields record_tiny_builds reads)."""
    import json

    isa = {"lds_bytes": 4096, "entry_points": 2, "matrix_mnemonics": {"v_mfma_f32_32x32x8_f16": 8}, "vgprs": 100,
           "agprs": 0, "scratch_bytes": 0, "wavefront_size": 64}
    return json.dumps({"arch": arch, "kernels": [
        {"name": n, "status": st, "error": "" if st == "ok" else "why", "seconds": 1.5, "peak_mib": 700,
         "lds_model": 4096 if st == "ok" else None, "isa": isa if st == "ok" else None} for n, st in kernels]})


def test_record_tiny_builds_condenses_reports_keeps_other_archs_and_writes_nothing_on_a_failure(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    script = [sys.executable, str(Path(__file__).resolve().parent.parent / "scripts" / "record_tiny_builds.py")]
    out = tmp_path / "tiny-builds.json"
    (tmp_path / "v-gfx942.json").write_text(_tiny_report("gfx942", [("k1", "ok"), ("k0", "ok"), ("k2", "unexpressible")]))
    r = subprocess.run([*script, "--reports", str(tmp_path), "--archs", "gfx942", "-o", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert list(data["archs"]["gfx942"]["kernels"]) == ["k0", "k1"] and data["archs"]["gfx942"]["compiled"] == 2
    assert data["archs"]["gfx942"]["unexpressible"] == {"k2": "why"}
    assert data["archs"]["gfx942"]["kernels"]["k0"]["lds_bytes"] == 4096
    assert out.stat().st_mode & 0o777 == 0o666 & ~_umask()  # a new file as any other (not mkstemp's 0600)
    # a run of another arch keeps gfx942's verdicts
    (tmp_path / "v-gfx950.json").write_text(_tiny_report("gfx950", [("k3", "ok")]))
    r = subprocess.run([*script, "--reports", str(tmp_path), "--archs", "gfx950", "-o", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 0 and sorted(json.loads(out.read_text())["archs"]) == ["gfx942", "gfx950"], r.stderr
    before = out.read_bytes()
    # a kernel that did not build: exit 1, named, and the file is as it was
    (tmp_path / "v-gfx950.json").write_text(_tiny_report("gfx950", [("k3", "failed")]))
    r = subprocess.run([*script, "--reports", str(tmp_path), "--archs", "gfx950", "-o", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 1 and "gfx950 k3: failed why" in r.stderr and out.read_bytes() == before
    # a report of another arch, or none: one line, exit non-zero, the file as it was
    (tmp_path / "v-gfx950.json").write_text(_tiny_report("gfx942", [("k3", "ok")]))
    r = subprocess.run([*script, "--reports", str(tmp_path), "--archs", "gfx950", "-o", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "not gfx950" in r.stderr and "Traceback" not in r.stderr and out.read_bytes() == before
    r = subprocess.run([*script, "--reports", str(tmp_path), "--archs", "gfx1100", "-o", str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "not a verify report" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([*script, "--archs", "gfx9000"], capture_output=True, text=True)
    assert r.returncode == 2 and "gfx9000" in r.stderr
