"""The compiled rule data (ckspace.rules.compiled): the build pickles the installed constraints directory, and a cold
process reads that one file instead of parsing the TOML files; it is served only for the package's own directory and
only while its key holds, and anything else is parsed as before. Expected values come from parsing the files."""

from __future__ import annotations

import dataclasses
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ckspace.rules import compile_data, compiled
from ckspace.rules import model as model_module
from ckspace.rules import data as D
from ckspace.rules.ckconfig import documents_from_table, entries_of
from ckspace.rules.curation import CURATION_TABLES, CkCuration
from ckspace.solve import listed
from packaging_helper import build_package

REPO = Path(__file__).resolve().parent.parent
TABLE = "catalogs/ck-configs.toml"


@pytest.fixture
def own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the constraints directory that stands for the package's own, with its compiled file written."""
    root = tmp_path / "constraints"
    shutil.copytree(D.default_constraints_dir(), root, ignore=shutil.ignore_patterns(compiled.FILE_NAME))
    monkeypatch.setattr(compiled, "OWN_ROOT", root)
    compiled.forget()
    D._LOADED.clear()
    listed._table.cache_clear()
    compile_data.write(root)
    yield root.resolve()
    compiled.forget()
    D._LOADED.clear()
    listed._table.cache_clear()


def parsed(root: Path) -> D.DataSet:
    data = D._load(root)
    data.digest = D.digest_dir(root)
    return data


def same(a: D.DataSet, b: D.DataSet) -> bool:
    """Every field equal (Macros compares by identity: by its contents)."""
    return all(getattr(a, f.name) == getattr(b, f.name) for f in dataclasses.fields(a)
               if f.name not in ("macros", "checked_archs")) and vars(a.macros) == vars(b.macros)


def parsed_documents(root: Path) -> list[tuple[str, list, list]]:
    """Every document of CK's stored table with its kernels, read and parsed as a user's table is."""
    return [(path, *entries_of(doc, f"{TABLE}: {path}"))
            for path, doc in documents_from_table(D.read_toml(root / TABLE, root), TABLE)]


def test_the_compiled_data_is_the_parsed_data_and_no_file_is_parsed(own: Path, monkeypatch) -> None:
    expected = parsed(own)
    documents = parsed_documents(own)
    assert len(documents) == 42 and sum(len(e) for _, e, _ in documents) == 3_157 - sum(len(k) for *_, k in documents)

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("parsed although compiled")

    monkeypatch.setattr(D, "_load", refuse)
    monkeypatch.setattr(listed, "read_toml", refuse)
    monkeypatch.setattr(listed, "entries_of", refuse)
    loaded = D.load(own)
    assert loaded.root == own and loaded.digest == expected.digest
    assert same(loaded, expected)
    # every arch's references were checked by the build, with every family: a process does not check them again
    assert loaded.checked_archs == set(expected.archs) and not expected.checked_archs
    monkeypatch.setattr(model_module.T, "check_condition", refuse)
    for arch in expected.archs:
        model_module.Model(loaded, arch, frozenset(loaded.families)).validate_references()
    with pytest.raises(AssertionError, match="parsed although compiled"):
        model_module.Model(expected, "gfx950", frozenset(expected.families)).validate_references()
    # CK's curation tables of every arch, as a model of the parsed data builds them; a model reads them, builds none
    built = {arch: {name: CkCuration(expected.ck_raw, expected.archs[arch]).relation(name) for name in CURATION_TABLES}
             for arch in expected.archs}
    assert all(compiled.curated(loaded, arch) == built[arch] for arch in expected.archs)
    monkeypatch.setattr(CkCuration, "relation", refuse)
    model = model_module.Model(loaded, "gfx90a", frozenset(loaded.families))
    assert {name: model.resolve(("ck", name)) for name in CURATION_TABLES} == built["gfx90a"]
    other = model_module.Model(loaded, "gfx90a", frozenset({"arch"}))  # a second model of the arch: unpickled once
    assert all(other.resolve(("ck", name)) is model.resolve(("ck", name)) for name in CURATION_TABLES)


def test_an_edited_data_file_is_parsed(own: Path) -> None:
    path = own / "archs" / "gfx950.toml"
    path.write_text(path.read_text().replace("lds_bytes = 163840", "lds_bytes = 65536"))
    loaded = D.load(own)
    assert loaded.archs["gfx950"]["lds_bytes"] == 65536
    assert same(loaded, parsed(own))


@pytest.mark.parametrize("spoil", ["flip", "truncate", "engine", "python", "empty", "header only", "not a dict"])
def test_a_damaged_or_foreign_compiled_file_is_parsed_instead(own: Path, spoil: str, monkeypatch) -> None:
    path = own / compiled.FILE_NAME
    blob = path.read_bytes()
    header, _, body = blob.partition(b"\n")
    if spoil == "flip":
        blob = header + b"\n" + body[:100] + bytes([body[100] ^ 1]) + body[101:]
    elif spoil == "truncate":
        blob = blob[:-10]
    elif spoil == "engine":
        monkeypatch.setattr(compiled.cache, "engine_digest", lambda: "another build")
    elif spoil == "python":
        monkeypatch.setattr(compiled.sys, "version_info", (3, 99, 0))
    elif spoil == "empty":
        blob = b""
    elif spoil == "header only":
        blob = header
    elif spoil == "not a dict":
        body = pickle.dumps(["a list"])
        blob = compiled._header(compiled.key(D.digest_dir(own)), body) + b"\n" + body
    path.write_bytes(blob)
    calls = []
    real = D._load
    monkeypatch.setattr(D, "_load", lambda root: calls.append(root) or real(root))
    loaded = D.load(own)
    assert calls == [own]
    assert same(loaded, parsed(own))


def test_only_the_packages_own_directory_is_read_from_a_compiled_file(own: Path, tmp_path: Path, monkeypatch) -> None:
    """A pickle runs code when loaded: a user's --constraints directory holding one is parsed, its pickle unread."""
    user = tmp_path / "user"
    shutil.copytree(own, user)
    assert (user / compiled.FILE_NAME).is_file()
    monkeypatch.setattr(compiled.pickle, "loads", lambda _: pytest.fail("a user's pickle was loaded"))
    calls = []
    real = D._load
    monkeypatch.setattr(D, "_load", lambda root: calls.append(root) or real(root))
    D.load(user)
    assert calls == [user.resolve()]
    assert compiled.documents(user.resolve(), TABLE, D.digest_dir(user)) is None


def test_the_command_writes_only_for_the_engine_that_runs_it(tmp_path: Path, capsys) -> None:
    assert compile_data.main([]) == 2
    assert compile_data.main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "is not the constraints directory of the ckspace imported here" in err


def test_the_build_compiles_the_data_and_the_installed_package_serves_it(tmp_path: Path) -> None:
    """setup.py's build_py on a copy of the checkout: the built package holds the compiled file, readable by every
    user, and a process that imports the built package loads its data from it, listing what the checkout lists."""
    lib = build_package(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    built = lib / "ckspace" / "constraints" / compiled.FILE_NAME
    assert built.is_file() and built.stat().st_mode & 0o444 == 0o444
    probe = ("import ckspace.rules.data as D\n"
             "D._load = lambda root: (_ for _ in ()).throw(AssertionError('parsed'))\n"
             "print(D.load().root)\n")
    env = {**env, "PYTHONPATH": str(lib), "CKSPACE_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str((lib / "ckspace" / "constraints").resolve())
    argv = ["-m", "ckspace", "enumerate", "--arch", "gfx950", "--set", "ck-profiler", "--dtype", "fp32",
            "--format", "names"]
    installed = subprocess.run([sys.executable, *argv], cwd=tmp_path, env=env, capture_output=True, text=True)
    checkout = subprocess.run([sys.executable, *argv], cwd=REPO, capture_output=True, text=True,
                              env={**env, "PYTHONPATH": str(REPO), "CKSPACE_CACHE_DIR": str(tmp_path / "cache2")})
    assert installed.returncode == checkout.returncode == 0
    assert installed.stdout == checkout.stdout and installed.stdout.count("\n") > 10


def test_an_arch_whose_references_fail_at_build_is_checked_by_each_process(own: Path, monkeypatch) -> None:
    """The build marks only the archs on which every rule's references check; a process checks the others itself
    (and reports a broken rule there, as a checkout does)."""
    real = model_module.Model.validate_references

    def fails_on_gfx90a(self) -> None:
        if self.arch == "gfx90a":
            raise model_module.DataError("rules/x.toml: rule x reads arch.nothing on gfx90a")
        real(self)

    monkeypatch.setattr(model_module.Model, "validate_references", fails_on_gfx90a)
    compile_data.write(own)
    monkeypatch.setattr(model_module.Model, "validate_references", real)
    compiled.forget()
    D._LOADED.clear()
    loaded = D.load(own)
    assert loaded.checked_archs == set(loaded.archs) - {"gfx90a"}
    calls = []
    check = model_module.T.check_condition
    monkeypatch.setattr(model_module.T, "check_condition", lambda *a: calls.append(a) or check(*a))
    model_module.Model(loaded, "gfx950", frozenset(loaded.families)).validate_references()
    assert not calls
    model_module.Model(loaded, "gfx90a", frozenset(loaded.families)).validate_references()
    assert calls


# A process that finds something else where the compiled file should be (a FIFO, a link to a device, a file of
# gigabytes) parses the TOML files, as when there is no file: the compiled file is a cache, never an error. Each runs in
# a child with a memory ceiling and a time limit, so that reading such a thing fails the test instead of the machine.
_CHILD = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from pathlib import Path
from ckspace.rules import compiled, data as D
root = Path(sys.argv[1])
compiled.OWN_ROOT = root
calls = []
real = D._load
D._load = lambda r: calls.append(r) or real(r)
loaded = D.load(root)
print(calls == [root], sorted(loaded.archs) == sorted(real(root).archs), len(loaded.rules) > 10)
"""


def _load_in_a_child(root: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "CKSPACE_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-c", _CHILD, str(root)], env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_place_of_the_compiled_file_is_parsed_around_without_blocking(own: Path, tmp_path: Path) -> None:
    path = own / compiled.FILE_NAME
    path.unlink()
    os.mkfifo(path)
    try:
        done = _load_in_a_child(own, tmp_path)
    finally:  # a reader blocked in open() (the bug) is let go: a writer opens and closes
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_link_to_dev_zero_in_place_of_the_compiled_file_is_parsed_around(own: Path, tmp_path: Path) -> None:
    path = own / compiled.FILE_NAME
    path.unlink()
    path.symlink_to("/dev/zero")
    done = _load_in_a_child(own, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"]


def test_a_sparse_file_of_gigabytes_in_place_of_the_compiled_file_is_parsed_around(own: Path, tmp_path: Path) -> None:
    path = own / compiled.FILE_NAME
    with path.open("r+b") as fh:  # the real file, then holes up to 3 GB: no disk is used
        fh.truncate(3 << 30)
    assert path.stat().st_size == 3 << 30
    done = _load_in_a_child(own, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "True"]


def test_the_real_compiled_file_is_far_below_the_bound(own: Path) -> None:
    """The bound that keeps a huge file out must leave the real file room to grow (a file over it is only parsed
    around, silently, so a build that outgrew it would lose the speed-up without a word)."""
    assert (own / compiled.FILE_NAME).stat().st_size * 4 <= compiled.MAX_BYTES
