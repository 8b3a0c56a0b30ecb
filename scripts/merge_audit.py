"""Add a round of `ckspace verify --audit --format json` outputs to an audit data file (scripts/data/audit-*.json).

    python scripts/merge_audit.py scripts/data/audit-2026-11-27.json ROUND OUT_DIR/gfx90a.json OUT_DIR/gfx950.json ...

Each input is one arch's JSON ({"audit": ..., "verify": ...}; the arch is the file's stem), next to the plan it
compiled (plan-ARCH.txt, `verify --audit --write-plan`). The round keeps every compiled kernel's status, first error
and, for a kernel that built, its code object's LDS (group segment) and the model's lds_bytes; the sections keep the
plan's names. `accepted_now` is then recomputed for every round: whether the
facts of this checkout (`--rules -ck-curation,+toolchain-clang22 --ck-api 2025.11`) accept the kernel.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ckspace import Space  # noqa: E402
from ckspace.codegen.ckapi import combine_rules  # noqa: E402

FACTS = combine_rules("-ck-curation,+toolchain-clang22", "2025.11")


def round_of(path: Path) -> dict:
    data = json.loads(path.read_text())
    kernels = {}
    for k in data["verify"]["kernels"]:
        if k["status"] in ("not-run", "unexpressible"):
            continue
        row = {"status": k["status"], "error": k.get("error")}
        isa = k.get("isa") or {}
        if k["status"] == "ok" and isa.get("lds_bytes") is not None:
            row["lds"] = isa["lds_bytes"]
            row["lds_model"] = k.get("lds_model")
        kernels[k["name"]] = row
    sections: list[dict] = []
    for line in (path.parent / f"plan-{path.stem}.txt").read_text().splitlines():
        if line.startswith("# audit: "):
            kind, _, detail = line[len("# audit: "):].partition(" ")
            sections.append({"kind": kind, "detail": detail.strip(), "names": []})
        elif line.strip() and not line.startswith("#"):
            sections[-1]["names"].append(line.strip())
    return {"kernels": kernels, "sections": sections}


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    target, label, inputs = Path(argv[0]), argv[1], [Path(p) for p in argv[2:]]
    data = json.loads(target.read_text())
    data["rounds"][label] = {p.stem: round_of(p) for p in inputs}
    spaces: dict[str, Space] = {}
    for rnd in data["rounds"].values():
        for arch, entry in rnd.items():
            space = spaces.setdefault(arch, Space(arch=arch, rules=FACTS))
            for name, row in entry["kernels"].items():
                row["accepted_now"] = not space.check(name)
    target.write_text(json.dumps(data, indent=0) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
