"""The support rules against CK's own code, at scale: a covering sample of a set's kernels (the fewest covering every
value and value pair of the tests objective, as `verify` picks them), their emitted units compiled host-only with
the build toolchain (ckspace.codegen.hostcheck), and random problems per variant, each asked of CK's
`<kernel>_is_supported` and of the rules (constraints/support.toml).

    python scripts/audit_support.py --arch gfx942 --ck-api 2025.11 --problems 300 -o /tmp/support-audit

Prints one line per variant (kernels, problems, checks, how many ran, disagreements) and writes every disagreement
to OUT/disagreements.json; exit 0 when the rules and CK agree on every check, 1 otherwise. The registry toolchain
holds CK Tile 2025.11 headers: that revision is the one checked here.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ckspace import Space  # noqa: E402
from ckspace.rules import support as S  # noqa: E402
from ckspace.rules.problem import random_problem  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", default="gfx942")
    ap.add_argument("--set", default="full")
    ap.add_argument("--ck-api", default="2025.11")
    ap.add_argument("--problems", type=int, default=300, help="random problems per variant")
    ap.add_argument("--kernels", type=int, default=80,
                    help="at most this many kernels: a seeded draw of the covering sample, every variant kept")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("-j", "--jobs", type=int, default=None)
    ap.add_argument("-o", "--output", default="/tmp/ckspace-support-audit")
    args = ap.parse_args(argv)
    started = time.perf_counter()
    space = Space(arch=args.arch, ck_api=args.ck_api, toolchain="registry")
    covering = space.cover(space.select(args.set), "tests")
    kernels = _draw(covering, args.kernels, args.seed)
    lib = space.host_check(kernels, Path(args.output), revision=args.ck_api, jobs=args.jobs)
    built = time.perf_counter()
    rules = S.rules_for(space.data, args.ck_api)
    rng = random.Random(args.seed)
    by_variant: dict[str, list[int]] = defaultdict(list)
    for i, k in enumerate(kernels):
        by_variant[str(k["variant"])].append(i)
    disagreements = []
    for variant, members in sorted(by_variant.items()):
        checks = ran = 0
        wrong = 0
        for _ in range(args.problems):
            problem = random_problem(rng, rng.choice((2, 2, 3)))
            for i in members:
                k = kernels[i]
                if k["ndim"] != problem.ndim:
                    continue  # the dispatcher matches NDimSpatial first (support.ndim)
                ck = lib.supports(i, problem)
                ours = not S.verdicts(rules, problem, k, space.model.resolve)
                checks += 1
                ran += ck
                if ck != ours:
                    wrong += 1
                    disagreements.append({"kernel": k["name"], "problem": problem.text(), "ck": ck, "rules": ours})
        print(f"{variant}: {len(members)} kernels, {args.problems} problems, {checks} checks, {ran} run, "
              f"{wrong} disagreements")
    out = Path(args.output) / "disagreements.json"
    out.write_text(json.dumps(disagreements, indent=1) + "\n")
    print(f"{len(kernels)} kernels of {args.arch} {args.set} (CK API {args.ck_api}); host library built in "
          f"{built - started:.0f} s, checks in {time.perf_counter() - built:.1f} s; {len(disagreements)} "
          f"disagreements ({out})")
    return 0 if not disagreements else 1


def _draw(kernels: list[dict], n: int, seed: int) -> list[dict]:
    """At most n of the kernels, drawn per variant in proportion (at least 4 of each, or all it has), in their
    order."""
    if len(kernels) <= n:
        return kernels
    rng = random.Random(seed)
    by_variant: dict[str, list[int]] = defaultdict(list)
    for i, k in enumerate(kernels):
        by_variant[str(k["variant"])].append(i)
    chosen: list[int] = []
    for members in by_variant.values():
        share = max(4, round(n * len(members) / len(kernels)))
        chosen += rng.sample(members, min(share, len(members)))
    return [kernels[i] for i in sorted(chosen)]


if __name__ == "__main__":
    sys.exit(main())
