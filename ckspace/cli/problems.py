"""`ckspace problems --set S`: test problems for every kernel of a set (ckspace.select.problems through Space)."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys

from ..errors import UsageError

FORMATS = ("text", "json", "csv", "ckprofiler", "cmake")
# the problem features, in the order of the coverage table (ckspace.select.problems.FEATURES; the CLI reaches no
# module below Space, so the order is written here and a test keeps the two equal)
FEATURES = ("filter", "stride", "dilation", "pad", "groups", "batch", "c_align", "k_align", "split_k")


def add_parser(sub: argparse._SubParsersAction) -> None:
    from .options import SETS_HELP, add_ck_api_options, add_over_option

    p = sub.add_parser(
        "problems", help="the fewest small convolution problems that exercise every kernel of a set",
        description="Test problems for a kernel set: the fewest small problems (within a bound on FLOPs and bytes) "
                    "such that every kernel runs at least one (CK's IsSupportedArgument, the support rules of the CK "
                    "API revision) and each stratum's problem features (filter 1x1/3x3/other, stride, dilation, "
                    "pads, G, N, C and K against the vector widths, split-K) are covered; chosen by CP-SAT, optimal "
                    "or with its gap. Kernels no problem can run are listed with the rules that stop them. Output: "
                    "a table (text), json or csv rows (problem, kernels), or ckProfiler command lines. Exit 0, or 2 "
                    "on bad usage.")
    p.add_argument("--arch", required=True, help="target arch (gfx90a, gfx942, gfx950, gfx1100, gfx1200, gfx1201, gfx1250)")
    p.add_argument("--set", dest="set_name", default="tests", metavar="SET",
                   help=f"the kernel set (default tests): {SETS_HELP}")
    p.add_argument("--variant", action="append", help="only these variants")
    p.add_argument("--ndim", action="append", help="only these ndims")
    p.add_argument("--dtype", action="append", help="only these dtypes")
    p.add_argument("--where", help="only kernels matching this filter (rule language)")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (default), json, csv, ckprofiler (command lines) or cmake (per variant and dtype: "
                        "the kernels and the problems they run, as CMake lists)")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically) instead of standard output")
    p.add_argument("--seed", type=int, default=0, help="seed of the candidate problems (default 0)")
    p.add_argument("--time-limit", dest="time_limit", type=float, default=20.0, metavar="T",
                   help="CP-SAT's deterministic time budget (about seconds; default 20): the same answer everywhere")
    p.add_argument("--rules", help="switch rule families: +fam,-fam")
    p.add_argument("--constraints", metavar="DIR", help="use this constraints directory instead of the built-in one")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    add_ck_api_options(p)
    add_over_option(p)


def cmd_problems(args: argparse.Namespace) -> int:
    from . import output
    from .options import space_from_args
    from ..spec import check_set

    check_set(args.set_name)
    if not 0 < args.time_limit <= 3600:
        raise UsageError(f"--time-limit must be between 0 and 3600 seconds, not {args.time_limit}")
    target = output.check_output_file(args.output, "-o") if args.output is not None else None
    space = space_from_args(args)
    result = space.problems(args.set_name, variant=args.variant, ndim=args.ndim, dtype=args.dtype, where=args.where,
                            seed=args.seed, time_limit=args.time_limit)
    text = render(result, args.format)
    with output.written_to(target, "-o"):
        sys.stdout.write(text)
        sys.stdout.flush()
    if target is not None:
        print(f"wrote {len(result.problems)} problems to {args.output}", file=sys.stderr)
    return 0


def render(result, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(result.to_json(), indent=1) + "\n"
    if fmt == "cmake":
        return result.cmake()
    if fmt == "ckprofiler":
        return "".join(line + "\n" for line in result.profiler_lines())
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["problem", "ndim", "k_batch", "flops", "bytes", "kernels", "names"])
        for c in result.problems:
            w.writerow([c.problem.text().split(" k_batch=")[0], c.problem.ndim, c.problem.k_batch, c.flops, c.bytes,
                        len(c.kernels), ";".join(c.kernels)])
        return buf.getvalue()
    out = [f"{result.arch} · {result.set_name} · CK API {result.ck_api}: {len(result.problems)} problems "
           f"({'optimal' if result.optimal else f'gap {result.gap:.1%}'}, of {result.candidates:,} candidates); each at "
           f"most {result.max_flops:,} FLOPs and {result.max_bytes // 1024:,} KiB", ""]
    width = max((len(c.problem.text()) for c in result.problems), default=10)
    out.append(f"{'problem (ConvParam order)':<{width}}  {'kernels':>7}  {'MFLOPs':>7}  features")
    for c in result.problems:
        feats = " ".join(f"{k}={v}" for k, v in c.features.items())
        out.append(f"{c.problem.text():<{width}}  {len(c.kernels):>7}  {c.flops / 1e6:>7.2f}  {feats}")
    if result.coverage:  # strata x features: the values the chosen problems reach with the stratum's kernels
        first = max(len(k) for k in result.coverage)
        out += ["", f"{'stratum':<{first}}  " + "  ".join(f"{n:<14}" for n in FEATURES)]
        for stratum, reached in result.coverage.items():
            out.append(f"{stratum:<{first}}  " + "  ".join(f"{'/'.join(reached.get(n, ['-'])):<14}" for n in FEATURES))
    out += ["", f"kernels that run a chosen problem: {result.kernels_run:,} of {result.kernels:,}",
            f"(stratum, feature value) pairs covered: {result.items_covered} of {result.items} reachable"]
    if result.unrunnable:
        out.append(f"{len(result.unrunnable):,} kernels run no problem (every problem they could take breaks these "
                   "support rules):")
        by_why: dict[tuple[str, ...], list[str]] = {}
        for name, why in result.unrunnable.items():
            by_why.setdefault(tuple(why), []).append(name)
        for why, kernels in sorted(by_why.items(), key=lambda item: -len(item[1])):
            out.append(f"  {len(kernels):>5}  {', '.join(why) or '(no problem designed)'}  e.g. {kernels[0]}")
    return "\n".join(out) + "\n"
