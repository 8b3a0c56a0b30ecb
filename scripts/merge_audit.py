"""Add a round of `ckspace verify --audit --format json` outputs to an audit data file (scripts/data/audit-*.json),
and write the audit's summary that `ckspace rules` shows (constraints/evidence/audit.json).

    python scripts/merge_audit.py scripts/data/audit-2026-11-27.json ROUND OUT_DIR/gfx90a.json OUT_DIR/gfx950.json ...
    python scripts/merge_audit.py scripts/data/audit-2026-11-27.json ROUND --add RUN_DIR/gfx90a.json ...
    python scripts/merge_audit.py scripts/data/audit-2026-11-27.json --summary constraints/evidence/audit.json

Each input is one arch's JSON ({"audit": ..., "verify": ...}; the arch is the file's stem), next to the plan it
compiled (plan-ARCH.txt, `verify --audit --write-plan`). The round keeps every compiled kernel's status, first error
and, for a kernel that built, its code object's LDS (group segment) and the model's lds_bytes; the sections keep the
plan's names. `accepted_now` is then recomputed for every round: whether the
facts of this checkout (`--rules -ck-curation,+toolchain-clang22 --ck-api 2025.11`) accept the kernel, and
`broken_now` which of their rules it breaks.

With --add, the inputs are later runs of a round already in the file (the rests of its plans,
scripts/audit_round_rest.py; ARCH.json or v-ARCH.json, as scripts/device/wait.sh brings them back): their verdicts
join the round's, and the round keeps its plan. A kernel outside the round's plan, or one whose new verdict
contradicts its old one, is an error and nothing is written.

The summary (--summary, after the facts or the data change; tests/test_audit_data.py checks it is current) counts,
per arch:
- precision: the uniform and the stratified draws of PRECISION_ROUNDS that the facts accept now, and how many of them
  built with matrix instructions;
- the confusion of every compiled kernel of every round: accepted or rejected now, built or not;
- LDS: of the kernels accepted now that built (with their ISA read), how many hold exactly the LDS that the model's
  lds_bytes of this checkout says (the code object's group segment);
and per rule and arch, its near misses: the compiled kernels of any round that break that rule and no other now, and
how many of them failed. A kernel counts only with a verdict: it failed (a compile error, no matrix instruction, no
launch), or it built and its ISA was read (rounds 3 on). Rounds 1 and 2 kept no ISA: their kernels that compiled are
counted apart (`compiled_isa_unread`), since one of them may have no matrix instruction or be unlaunchable.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ckspace import Space  # noqa: E402
from ckspace.codegen.ckapi import combine_rules  # noqa: E402
from ckspace.codegen.verify import model_lds  # noqa: E402

FACTS = combine_rules("-ck-curation,+toolchain-clang22", "2025.11")
# Rounds whose compiled draws are a uniform (or stratified) draw of the facts' space of this checkout: round 6, drawn
# from today's space with each draw in a seeded random order, so the prefix a budget compiled is itself uniform.
# Rounds 3 and 4 compiled a prefix of draws listed sorted by name (mostly bwd_data first, no fp32 forward on gfx942):
# their kernels count in the confusion matrix and the near misses, not in the precision. Rounds 1 and 2 were drawn
# from other spaces (arch.wave-layout was a fact then).
PRECISION_ROUNDS = ("6",)
VERDICTS = ("ok", "failed", "no-matrix", "no-launch")  # not: not-run, unexpressible



def round_of(path: Path, with_plan: bool = True) -> dict:
    data = json.loads(path.read_text())
    kernels = {}
    for k in data["verify"]["kernels"]:
        if k["status"] in ("not-run", "unexpressible", "timed-out"):  # no verdict
            continue
        row = {"status": k["status"], "error": k.get("error")}
        isa = k.get("isa") or {}
        if k["status"] == "ok" and isa.get("lds_bytes") is not None:
            row["lds"] = isa["lds_bytes"]
            row["lds_model"] = k.get("lds_model")
        kernels[k["name"]] = row
    sections: list[dict] = []
    for line in (path.parent / f"plan-{path.stem}.txt").read_text().splitlines() if with_plan else []:
        if line.startswith("# audit: "):
            kind, _, detail = line[len("# audit: "):].partition(" ")
            sections.append({"kind": kind, "detail": detail.strip(), "names": []})
        elif line.strip() and not line.startswith("#"):
            sections[-1]["names"].append(line.strip())
    return {"kernels": kernels, "sections": sections}


def _add(rounds: dict, label: str, runs: dict[str, dict]) -> None:
    """Join later runs' verdicts (arch -> round_of without a plan) to round `label`, in place; ValueError on a kernel
    outside the round's plan or a verdict that contradicts the round's."""
    if label not in rounds:
        raise ValueError(f"no round {label!r} to add to (rounds: {', '.join(rounds)})")
    for arch, run in runs.items():
        entry = rounds[label].get(arch)
        if entry is None:
            raise ValueError(f"round {label} has no arch {arch!r}")
        planned = {n for s in entry["sections"] for n in s["names"]}
        for name, row in run["kernels"].items():
            if name not in planned:
                raise ValueError(f"{arch}: {name} is not in round {label}'s plan")
            old = entry["kernels"].get(name)
            if old is not None and old["status"] != row["status"]:
                raise ValueError(f"{arch}: {name} was {old['status']} and is now {row['status']}")
    for arch, run in runs.items():
        kernels = rounds[label][arch]["kernels"]
        for name, row in run["kernels"].items():
            kernels.setdefault(name, row)


def recompute(data: dict) -> None:
    """accepted_now and broken_now of every compiled kernel, by the facts of this checkout, and lds_model_now of every
    kernel that built with its LDS read: the model's lds_bytes of this checkout (lds_model is the one of the run that
    compiled it, which a later fix of the formula leaves behind)."""
    spaces: dict[str, Space] = {}
    for rnd in data["rounds"].values():
        for arch, entry in rnd.items():
            space = spaces.setdefault(arch, Space(arch=arch, rules=FACTS))
            for name, row in entry["kernels"].items():
                broken = sorted({v.rule for v in space.check(name)})
                row["accepted_now"] = not broken
                row["broken_now"] = broken
                if "lds" in row:
                    row["lds_model_now"] = model_lds(space, space.parse(name))


def summary(data: dict, source: str) -> dict:
    archs: dict[str, dict] = {}
    rules: dict[str, dict[str, dict[str, int]]] = {}
    for label, rnd in data["rounds"].items():
        for arch, entry in rnd.items():
            mine = archs.setdefault(arch, {"uniform": {"compiled": 0, "built": 0},
                                           "stratified": {"compiled": 0, "built": 0},
                                           "confusion": {"accepted_built": 0, "accepted_failed": 0,
                                                         "rejected_built": 0, "rejected_failed": 0},
                                           "lds": {"accepted_built": 0, "model_equal": 0}})
            kernels = entry["kernels"]
            for row in kernels.values():
                if row["status"] not in VERDICTS:
                    continue
                if row["status"] == "ok" and "lds" not in row:
                    mine["compiled_isa_unread"] = mine.get("compiled_isa_unread", 0) + 1
                    continue
                built = row["status"] == "ok"
                key = f"{'accepted' if row['accepted_now'] else 'rejected'}_{'built' if built else 'failed'}"
                mine["confusion"][key] += 1
                if built and row["accepted_now"]:  # every such row read its LDS (rows without are skipped above)
                    mine["lds"]["accepted_built"] += 1
                    mine["lds"]["model_equal"] += row["lds_model_now"] == row["lds"]
                if len(row["broken_now"]) == 1:
                    count = rules.setdefault(row["broken_now"][0], {}).setdefault(arch, {"compiled": 0, "failed": 0})
                    count["compiled"] += 1
                    count["failed"] += not built
            if label not in PRECISION_ROUNDS:
                continue
            for section in entry["sections"]:
                if section["kind"] not in ("uniform", "stratified"):
                    continue
                for name in section["names"]:
                    row = kernels.get(name)
                    if row is not None and row["status"] in VERDICTS and row["accepted_now"]:
                        mine[section["kind"]]["compiled"] += 1
                        mine[section["kind"]]["built"] += row["status"] == "ok"
    order = sorted(archs, key=lambda a: (len(a), a))  # gfx90a, gfx942, gfx950, gfx1100, gfx1201
    return {"doc": "ckspace verify --audit with the registry toolchain (clang 22.1.8 of zig 0.17.0, CK Tile 2025.11) "
                   f"and --ck-api 2025.11; precision from the draws of "
                   f"round{'s' if len(PRECISION_ROUNDS) > 1 else ''} {', '.join(PRECISION_ROUNDS)}",
            "data": source, "precision_rounds": list(PRECISION_ROUNDS), "archs": {a: archs[a] for a in order},
            "rules": {rule: {a: rules[rule][a] for a in order if a in rules[rule]} for rule in sorted(rules)}}


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--summary":
        target, out = Path(argv[0]), Path(argv[2])
        data = json.loads(target.read_text())
        recompute(data)
        target.write_text(json.dumps(data, indent=0) + "\n")
        rel = target.resolve().relative_to(Path(__file__).resolve().parent.parent) \
            if target.resolve().is_relative_to(Path(__file__).resolve().parent.parent) else target
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(summary(data, str(rel)), indent=1, sort_keys=False) + "\n")
        return 0
    add = len(argv) > 2 and argv[2] == "--add"
    if len(argv) < 3 + add or argv[1].startswith("-") or any(a.startswith("-") for a in argv[2 + add:]):
        print("usage: " + __doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    target, label, inputs = Path(argv[0]), argv[1], [Path(p) for p in argv[2 + add:]]
    data = json.loads(target.read_text())
    if not add:
        data["rounds"][label] = {p.stem: round_of(p) for p in inputs}
    else:
        try:
            _add(data["rounds"], label, {p.stem.removeprefix("v-"): round_of(p, with_plan=False) for p in inputs})
        except ValueError as exc:
            print(f"merge_audit.py: {exc}", file=sys.stderr)
            return 1
    recompute(data)
    target.write_text(json.dumps(data, indent=0) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
