#!/usr/bin/env python3
"""Fit templates/compile-cost.toml (the expected compile cost of a kernel) to measured compile units.

The measurements are scripts/data/compile-units-2025.11.csv: one row per compile unit that `ckspace verify` built,
with its arch, its seconds of one core, its peak memory and its kernels. The model is linear:

    unit seconds = unit + sum over its kernels of (base[arch] + value terms + tile_m * tile_n / 16384 * area)

fitted by least squares (numpy, which OR-Tools already needs). The fixed part `unit` is fitted too; it comes out
at about 6 s, what compiling CK Tile's headers with no kernel costs (../shared/toolchain/README.md).

    python3 scripts/fit_compile_cost.py             # print the fit and how well it predicts (5-fold cross-validation)
    python3 scripts/fit_compile_cost.py --write     # write templates/compile-cost.toml
    python3 scripts/fit_compile_cost.py --check     # exit 1 when templates/compile-cost.toml is not this fit

Adding measurements: run `ckspace verify --names FILE --unit-size 4 -o DIR ...`, then

    python3 scripts/fit_compile_cost.py --add DIR/verify-results.json --names FILE --arch ARCH \
        --ck-api 2025.11 [--compiler PATH]

appends its units (kernels of one unit share their per-kernel seconds and peak; verify divides a unit's time
evenly among its kernels) to the CSV.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

DATA = REPO / "scripts" / "data" / "compile-units-2025.11.csv"
OUT = REPO / "templates" / "compile-cost.toml"
ARCHS = ("gfx90a", "gfx942", "gfx950")
VALUES = {"pipeline": ("compv3", "compv4", "mem"), "variant": ("bwd_data", "bwd_weight")}
AREA = (("tile_m", "tile_n"), 16384)

HEADER = """\
# The expected compile cost of a CK Tile kernel, in seconds of one core: what `ckspace emit` balances its default
# compile units by (ckspace/codegen/compilecost.py). Written by scripts/fit_compile_cost.py; do not edit by hand.
#
# unit seconds = unit + the sum over its kernels of
#                (kernel.base[arch] + kernel.value[field][value] for each listed field
#                 + kernel.product seconds per `per` of the product of its fields)
#
# kernel.base.default stands for archs with no measurements (gfx950's, the slowest measured). A value not listed
# adds nothing: compv1 and forward are the reference, and the pipelines CK API 2025.11 lacks were not measured.
"""


def load_rows(path: Path = DATA) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def features(config, arch: str) -> list[float]:
    row = [1.0 if arch == a else 0.0 for a in ARCHS]
    for name, values in VALUES.items():
        row += [1.0 if config[name] == v else 0.0 for v in values]
    fields, per = AREA
    product = 1
    for f in fields:
        product *= config[f]
    return row + [product / per]


def design(rows):
    import numpy as np

    from ckspace import Space

    spaces = {a: Space(arch=a) for a in ARCHS}
    X, y = [], []
    for r in rows:
        configs = [spaces[r["arch"]].parse(n) for n in r["kernels"].split()]
        per_kernel = np.sum([features(c, r["arch"]) for c in configs], axis=0)
        X.append([1.0, *per_kernel])
        y.append(float(r["unit_seconds"]))
    return np.array(X), np.array(y)


def fit(X, y):
    import numpy as np

    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    return coef


def r_squared(y, pred) -> float:
    return float(1 - ((y - pred) ** 2).sum() / ((y - y.mean()) ** 2).sum())


def cross_validated(X, y, folds: int = 5) -> float:
    import numpy as np

    order = list(range(len(y)))
    random.Random(1).shuffle(order)
    pred = np.zeros(len(y))
    for f in range(folds):
        test = order[f::folds]
        held = set(test)
        train = [i for i in order if i not in held]
        pred[test] = X[test] @ fit(X[train], y[train])
    return r_squared(y, pred)


def render(coef, rows: int, r2: float, cv: float) -> str:
    c = [round(float(v), 2) for v in coef]
    unit, bases, rest = c[0], dict(zip(ARCHS, c[1:1 + len(ARCHS)])), c[1 + len(ARCHS):]
    lines = [HEADER]
    lines.append(f'measured = """{rows} compile units of CK API 2025.11 kernels (mostly 4 kernels each) built by \\\n'
                 "`ckspace verify` with clang 22 (ziglang) on a 16-core machine, -j 16; scripts/data/\\\n"
                 f"compile-units-2025.11.csv. R^2 {r2:.2f} on the units, {cv:.2f} in 5-fold cross-validation. \\\n"
                 'No measurements of CK API 2026.06 (no headers can be installed): its units use these."""')
    lines.append(f"unit = {unit}\n")
    lines.append("[kernel.base]")
    for a in ARCHS:
        lines.append(f"{a} = {bases[a]}")
    lines.append(f"default = {max(bases.values())}\n")
    for name, values in VALUES.items():
        lines.append(f"[kernel.value.{name}]")
        for v in values:
            lines.append(f"{v} = {rest.pop(0)}")
        lines.append("")
    fields, per = AREA
    lines.append("[[kernel.product]]")
    lines.append(f"fields = [{', '.join(repr(f).replace(chr(39), chr(34)) for f in fields)}]")
    lines.append(f"per = {per}")
    lines.append(f"seconds = {rest.pop(0)}")
    return "\n".join(lines) + "\n"


def add(results: Path, names_file: Path, arch: str, revision: str, compiler: str | None) -> int:
    """Append the units of a verify run to the CSV (the kernel keys are recomputed by emitting the names)."""
    import collections
    import json

    from ckspace import Space
    from ckspace.cli.options import configs_of_names
    from ckspace.codegen import ckapi
    from ckspace.codegen.emit import emit
    from ckspace.codegen.verify import _key

    space = Space(arch=arch, rules=ckapi.combine_rules(None, revision))
    configs = configs_of_names(space, str(names_file), revision)
    with tempfile.TemporaryDirectory() as tmp:
        emit(space, configs, tmp, revision=revision, chunk_size=4)
        manifest = json.loads((Path(tmp) / "manifest.json").read_text())
    compiler_id = f"{compiler or 'registry'}||{revision}"
    by_key = {_key(str(manifest["kernels"][c["name"]]["digest"]), arch, compiler_id): str(c["name"]) for c in configs}
    kept = json.loads(results.read_text())["kernels"]
    units = collections.defaultdict(list)
    for key, hit in kept.items():
        if key in by_key and hit.get("status") == "ok" and hit.get("seconds"):
            units[(hit["seconds"], hit.get("peak_mib"), hit.get("unit_size"))].append(by_key[key])
    new = [(arch, round(s * len(ns), 2), round(p or 0.0, 1), " ".join(sorted(ns)))
           for (s, p, size), ns in units.items() if len(ns) == size]
    if not new:
        sys.exit(f"no unit of {results} matches the names of {names_file} (wrong --arch, --ck-api or --compiler?)")
    old = [(r["arch"], float(r["unit_seconds"]), float(r["peak_mib"]), r["kernels"]) for r in load_rows()]
    seen = {r[3] for r in old}
    merged = sorted(old + [r for r in new if r[3] not in seen], key=lambda r: (r[0], r[3]))
    with open(DATA, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["arch", "unit_seconds", "peak_mib", "kernels"])
        w.writerows(merged)
    print(f"{len(merged) - len(old)} unit(s) added to {DATA.relative_to(REPO)}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(REPO)}")
    ap.add_argument("--check", action="store_true", help=f"exit 1 when {OUT.relative_to(REPO)} is not this fit")
    ap.add_argument("--add", type=Path, metavar="RESULTS", help="a verify-results.json to add to the measurements")
    ap.add_argument("--names", type=Path, help="with --add: the names file verify was given")
    ap.add_argument("--arch", choices=ARCHS, help="with --add: the arch verify compiled for")
    ap.add_argument("--ck-api", default="2025.11", help="with --add: the CK API revision (default 2025.11)")
    ap.add_argument("--compiler", help="with --add: the --compiler verify was given, if any")
    args = ap.parse_args()
    if args.add:
        if not (args.names and args.arch):
            ap.error("--add needs --names and --arch")
        return add(args.add, args.names, args.arch, args.ck_api, args.compiler)
    rows = load_rows()
    X, y = design(rows)
    coef = fit(X, y)
    r2, cv = r_squared(y, X @ coef), cross_validated(X, y)
    text = render(coef, len(rows), r2, cv)
    print(f"{len(rows)} units: R^2 {r2:.3f}, 5-fold cross-validated R^2 {cv:.3f}; fixed part {coef[0]:.2f} s per unit")
    if args.check:
        same = OUT.is_file() and OUT.read_text(encoding="utf-8") == text
        print(f"{OUT.relative_to(REPO)} {'is' if same else 'is NOT'} this fit")
        return 0 if same else 1
    if args.write:
        OUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUT.relative_to(REPO)}")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
