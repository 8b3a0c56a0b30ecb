#!/usr/bin/env python3
"""Benchmark of the solver: where the CPU time of a cold, in-process enumeration goes, and the open-space count.

    python scripts/bench_solve.py                 # gfx950, default families, then the open space count
    python scripts/bench_solve.py --arch gfx942 --no-open
    python scripts/bench_solve.py --no-memo       # solve every bag model, even those another stratum shares

Times are CPU seconds of this process (time.process_time, which includes CP-SAT's own thread):
  plan     folding the rules per stratum, the join tree, the implied projections
  compile  building the CP-SAT models of the bags
  solve    CP-SAT enumerating the bags
  combine  the count messages (joins on separator values)
  configs  walking the join into config dicts (enumeration only)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arch", default="gfx950")
    ap.add_argument("--no-open", action="store_true", help="skip the open-space count")
    ap.add_argument("--no-memo", action="store_true", help="solve every bag model and count every stratum, even where "
                    "another stratum has the identical model")
    ap.add_argument("--strata", action="store_true", help="print the per-stratum figures")
    args = ap.parse_args()

    t0 = time.process_time()
    import ortools.sat.python.cp_model  # noqa: F401  (import cost reported separately)

    t_import = time.process_time() - t0
    from ckspace.memo import clear_all
    from ckspace.solve import bags, plan as solve
    from ckspace.rules import data
    from ckspace.rules.model import Model, resolve_families

    if args.no_memo:
        bags.SOLVED_LIMIT = 0
        solve.COUNTED_LIMIT = 0
    d = data.load()

    def run(families: str | None, enumerate_configs: bool) -> None:
        clear_all()
        m = Model(d, args.arch, resolve_families(d, families))
        # Build the curated relations outside the timed region (data loading, not solving).
        m.curation.relation("tile"), m.curation.relation("wave_warp"), m.curation.relation("vec")
        m.curation.relation("pipeline"), m.curation.relation("depthwise")
        split = {"plan": 0.0, "compile": 0.0, "solve": 0.0, "combine": 0.0, "configs": 0.0}
        total, models, bags = 0, 0, 0
        started = time.process_time()
        for st in m.strata:
            t = time.process_time()
            p = solve.plan(m, st)
            split["plan"] += time.process_time() - t
            if p.infeasible_by:
                if args.strata:
                    print(f"  {st.label():28s} 0 (infeasible: {p.infeasible_by})")
                continue
            if enumerate_configs:
                solve.solve_plan(m, p)
                n = solve.count_plan(p)
                t = time.process_time()
                k = sum(1 for _ in solve.configs(m, p))
                split["configs"] += time.process_time() - t
                assert k == n, (st, k, n)
            else:
                n = solve.count_only(m, p)
            for key in ("compile", "solve", "combine"):
                split[key] += p.timings.get(key, 0.0)
            solved = sum(f.solver_calls for f in p.factors) + p.solver_calls
            models += solved
            bags += len(p.factors)
            total += n
            if args.strata:
                print(f"  {st.label():28s} {n:>24,d}  bags {len(p.factors):2d}  models solved {solved:2d}")
        elapsed = time.process_time() - started
        parts = "  ".join(f"{k} {v:.3f}s" for k, v in split.items() if v or k != "configs")
        print(f"  total {total:,d} configs; CPU {elapsed:.3f}s = {parts}; {bags} bags, {models} CP-SAT models solved")

    print(f"import ortools: {t_import:.3f}s CPU")
    print(f"{args.arch}, default families, enumerate (cold):")
    run(None, True)
    print(f"{args.arch}, default families, count only (cold):")
    run(None, False)
    if not args.no_open:
        print(f"{args.arch}, open space (families arch, pipeline), count only (cold):")
        run("-ck-curation", False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
