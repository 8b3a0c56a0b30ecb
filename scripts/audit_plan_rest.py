#!/usr/bin/env python3
"""What is left of an audit plan: its kernels without a verdict yet, for the next run to compile.

    python3 scripts/audit_plan_rest.py PLAN VERIFY_JSON [VERIFY_JSON ...] -o REST_PLAN

PLAN is a `verify --audit --write-plan` file; each VERIFY_JSON is the `--format json` output of a run over it (or over
an earlier rest of it). REST_PLAN keeps PLAN's comment lines and sections, and every kernel of it that no run gave a
verdict (ok, failed, no-matrix, no-launch): not run, timed out, or not in any run. The order within each section is
PLAN's, a random order (select/audit.py), so the rest of a draw is still a uniform draw, and the next run compiles
it with `verify --audit --names REST_PLAN`. Written atomically; PLAN is never changed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ckspace.files import atomic_write  # noqa: E402

VERDICTS = {"ok", "failed", "no-matrix", "no-launch"}


def verdicts(paths: list[Path]) -> set[str]:
    done: set[str] = set()
    for path in paths:
        data = json.loads(path.read_text())
        kernels = data["verify"]["kernels"] if "verify" in data else data["kernels"]
        done |= {k["name"] for k in kernels if k["status"] in VERDICTS}
    return done


def rest(plan_lines: list[str], done: set[str]) -> list[str]:
    return [line for line in plan_lines if line.startswith("#") or not line.strip() or line.strip() not in done]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("plan", type=Path)
    p.add_argument("results", type=Path, nargs="+")
    p.add_argument("-o", "--output", type=Path, required=True)
    args = p.parse_args(argv)
    if args.output.resolve() == args.plan.resolve():
        p.error("-o must not be the plan itself: keep the plan, write its rest beside it")
    lines = args.plan.read_text().splitlines()
    kept = rest(lines, verdicts(args.results))
    atomic_write(args.output, ("\n".join(kept) + "\n").encode())
    names = sum(1 for line in lines if line.strip() and not line.startswith("#"))
    left = sum(1 for line in kept if line.strip() and not line.startswith("#"))
    print(f"{args.plan}: {names - left} of {names} kernel(s) have a verdict; {left} left in {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
