#!/usr/bin/env python3
"""What is left of an audit round kept in an audit data file: its plan's kernels without a verdict, for the next run.

    python3 scripts/audit_round_rest.py scripts/data/audit-2026-11-27.json 6 gfx950 -o plan-gfx950.txt

The data file (scripts/merge_audit.py) keeps each round's plan, its sections in their seeded random order, and every
kernel that got a verdict. The rest is written as a plan (`verify --audit --names` reads its sections) holding, in
each section, the plan's kernels that no run gave a verdict, in the plan's order: the rest of a uniform draw is still
one. This is how a round resumes on a machine that kept nothing from the last one (the device machine starts bare).
With --holes-last, the kernels of a section that stand before its last one with a verdict (holes: compiles that
earlier runs started and their deadlines stopped, every time, while later kernels built) go to the end of their
section, in their order, so that a run spends its budget on the draw's next kernels first; verify keeps such
attempts itself (verify-results.json) where its work directory survives. Written atomically.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit_plan_rest import VERDICTS  # noqa: E402
from ckspace.files import atomic_write  # noqa: E402
from ckspace.select.audit import AuditPlan, Section  # noqa: E402


def rest_plan(entry: dict, about: str, holes_last: bool = False) -> AuditPlan:
    """The rest plan of one arch's entry of a round ({"kernels": {name: row}, "sections": [...]})."""
    done = {name for name, row in entry["kernels"].items() if row.get("status") in VERDICTS}
    sections = []
    for section in entry["sections"]:
        names = section["names"]
        last = max((i for i, n in enumerate(names) if n in done), default=-1) if holes_last else -1
        holes = [n for n in names[:max(last, 0)] if n not in done]
        sections.append(Section(section["kind"], section["detail"],
                                [n for n in names[last + 1:] if n not in done] + holes))
    return AuditPlan(sections, about)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data", type=Path, help="an audit data file (scripts/data/audit-*.json)")
    p.add_argument("round", help="the round's label, e.g. 6")
    p.add_argument("arch")
    p.add_argument("-o", "--output", type=Path, required=True)
    p.add_argument("--holes-last", action="store_true",
                   help="a section's kernels without a verdict before its last one with a verdict go to its end")
    args = p.parse_args(argv)
    try:
        rounds = json.loads(args.data.read_text())["rounds"]
    except (OSError, ValueError, KeyError) as exc:
        p.error(f"{args.data}: not an audit data file ({exc})")
    if args.round not in rounds:
        p.error(f"{args.data}: no round {args.round!r} (rounds: {', '.join(rounds)})")
    if args.arch not in rounds[args.round]:
        p.error(f"round {args.round} has no arch {args.arch!r} (archs: {', '.join(rounds[args.round])})")
    entry = rounds[args.round][args.arch]
    plan = rest_plan(entry, f"{args.arch}, the rest of round {args.round} of {args.data.name}", args.holes_last)
    atomic_write(args.output, plan.text().encode())
    names = sum(len(s["names"]) for s in entry["sections"])
    left = sum(len(s.names) for s in plan.sections)
    print(f"round {args.round}, {args.arch}: {names - left} of {names} kernel(s) have a verdict; {left} left in "
          f"{args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
