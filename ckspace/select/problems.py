"""Test problems for every kernel of a set (`ckspace problems`, issue 27): the fewest small convolution problems such
that every kernel runs at least one of them and the problems' features are covered pairwise with the kernel strata.

1. Kernels that no support rule tells apart share one *signature* (the values of the fields the rules read): they
   run the same problems, so each signature is one row of the support matrix.
2. Candidates: for each signature, a seeded design of small problems it can run (its specialization's filter,
   stride and pads, C and K on its vectors, G on its merged groups, N on a depthwise kernel's batch), varied over
   the features, plus variants that leave its vectors or split K (which other signatures may run). Each candidate
   is kept only within the size bound (FLOPs and bytes).
3. The support matrix: each candidate's support condition (ckspace.rules.support, the CK API revision's rules with
   the problem folded in) evaluated on each signature.
4. CP-SAT: one Boolean per candidate; every signature that some candidate runs needs one chosen problem it runs;
   every (stratum, feature value) that some candidate reaches with a kernel of that stratum needs one chosen problem
   that does. The objective is the number of problems first, their FLOPs second; the solver says whether the answer
   is optimal, else its gap.

Features: the filter (1x1, 3x3, other), the stride (1, 2), the dilation (1, 2), the pads (0 or not), G (1 or more),
N (1 or more), C's and K's alignment (the largest of 1, 2, 4, 8, 16 dividing it: "at and off each vector width"),
and split-K (k_batch 1 or more). ndim is part of the stratum.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Sequence

from ..errors import ExprError, UsageError
from ..rules import expr as E
from ..rules import support as S
from ..rules.kernel import number, numbers, stratum_of, text
from ..rules.problem import Problem, ProblemError, _checked

if TYPE_CHECKING:  # pragma: no cover
    from ..solve.kernels import KernelSpace

MAX_FLOPS = 50_000_000  # a problem's forward FLOPs (2·G·N·K·C·Πout·Πfilter): milliseconds on any GPU, seconds on a CPU reference
MAX_BYTES = 4 * 1024 * 1024  # input, weight and output together, at 4 bytes an element
DESIGN = 16  # candidates drawn per signature
TIME_LIMIT = 20.0  # CP-SAT's deterministic time (about seconds): the same answer on every machine
# The fields _design reads: kernels that agree on them get one design (their other fields, read by a few rules, are
# told apart by the support matrix)
DESIGN_FIELDS = ("variant", "ndim", "specialization", "vec_a", "vec_b", "vec_c", "num_groups_to_merge", "filter_size",
                 "stride_h", "stride_w", "pad_h", "pad_w", "nbatch", "dw_tile_h", "dw_tile_w")
FEATURES = ("filter", "stride", "dilation", "pad", "groups", "batch", "c_align", "k_align", "split_k")
ALIGNMENTS = (16, 8, 4, 2, 1)


def _variant_dtype(name: str) -> tuple[str, str]:
    """A kernel name's variant and dtype (the name's first fields, as CK writes it)."""
    from ..rules.names import parse_name

    cfg = parse_name(name)
    return str(cfg["variant"]), str(cfg["dtype"])


def features(p: Problem) -> dict[str, str]:
    """The problem's value of each feature."""
    def align(x: int) -> str:
        return str(next(a for a in ALIGNMENTS if x % a == 0))

    return {
        "filter": "1x1" if all(f == 1 for f in p.filter) else "3x3" if all(f == 3 for f in p.filter) else "other",
        "stride": "1" if all(s == 1 for s in p.stride) else "2+",
        "dilation": "1" if all(d == 1 for d in p.dilation) else "2+",
        "pad": "0" if not any((*p.pad_left, *p.pad_right)) else "1+",
        "groups": "1" if p.g == 1 else "2+",
        "batch": "1" if p.n == 1 else "2+",
        "c_align": align(p.c), "k_align": align(p.k),
        "split_k": "1" if p.k_batch == 1 else "2+",
    }


def flops(p: Problem) -> int:
    return 2 * p.g * p.n * p.k * p.c * math.prod(p.output) * math.prod(p.filter)


def tensor_bytes(p: Problem) -> int:
    elems = p.g * (p.n * p.c * math.prod(p.input) + p.k * p.c * math.prod(p.filter) + p.n * p.k * math.prod(p.output))
    return 4 * elems


@dataclass
class ChosenProblem:
    problem: Problem
    features: dict[str, str]
    flops: int
    bytes: int
    kernels: list[str]  # the set's kernels that run it
    runs: list[tuple[str, str]] = field(default_factory=list)  # the (variant, dtype) of those kernels


@dataclass
class ProblemSet:
    """The chosen problems and what they cover."""

    arch: str
    set_name: str
    ck_api: str
    problems: list[ChosenProblem]
    kernels: int  # kernels in the set
    kernels_run: int  # kernels that run at least one chosen problem
    unrunnable: dict[str, list[str]]  # kernel -> the support rules that keep every candidate from it
    items: int  # (stratum, feature value) pairs some candidate reaches
    items_covered: int
    candidates: int
    optimal: bool
    gap: float
    seconds: float
    coverage: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # stratum -> feature -> values
    max_flops: int = MAX_FLOPS
    max_bytes: int = MAX_BYTES

    def cmake(self) -> str:
        """A CMake fragment for a test build: per variant (and dtype), the set's kernels that run a chosen problem and
        the problems they run, as lists (CKSPACE_<VARIANT>_<DTYPE>_KERNELS, CKSPACE_<VARIANT>_<DTYPE>_PROBLEMS: CK's
        ConvParam order, then k_batch), to include() and iterate with foreach."""
        kernels: dict[tuple[str, str], set[str]] = {}
        problems: dict[tuple[str, str], list[str]] = {}
        for c in self.problems:
            text = " ".join(c.problem.text().split(" k_batch=")[0].split()) + f" {c.problem.k_batch}"
            for variant, dtype in c.runs:
                problems.setdefault((variant, dtype), []).append(text)
        for c in self.problems:
            for name in c.kernels:
                v, d = _variant_dtype(name)
                kernels.setdefault((v, d), set()).add(name)
        out = [f"# Generated by `ckspace problems --arch {self.arch} --set {self.set_name}` (CK API {self.ck_api}): "
               f"{len(self.problems)} problems for {self.kernels_run} of {self.kernels} kernels"
               f"{'' if self.optimal else f' (gap {self.gap:.1%})'}.",
               "# Each problem: NDimSpatial G N K C, filter, input, strides, dilations, left pads, right pads, k_batch."]
        for (variant, dtype) in sorted(problems):
            key = f"CKSPACE_{variant.upper()}_{dtype.upper()}"
            out.append(f"set({key}_KERNELS")
            out += [f"    {n}" for n in sorted(kernels.get((variant, dtype), ()))]
            out.append(")")
            out.append(f"set({key}_PROBLEMS")
            out += [f'    "{t}"' for t in problems[(variant, dtype)]]
            out.append(")")
        return "\n".join(out) + "\n"

    def profiler_lines(self) -> list[str]:
        """ckProfiler command lines: per chosen problem, one per (variant, dtype) whose kernels run it (profiler/
        src/profile_grouped_conv_{fwd,bwd_data,bwd_weight}.cpp of CK: the NHWGC layouts, verification on, integer
        initialization, no log, no timing; forward takes the 32-bit index type, bwd_data and bwd_weight end with
        the split-K k_batch)."""
        out = []
        for c in self.problems:
            params = " ".join(c.problem.text().split(" k_batch=")[0].split())
            for variant, dtype in c.runs:
                if variant not in PROFILER:
                    continue
                op, layout, index = PROFILER[variant]
                tail = "" if variant == "forward" else f" {c.problem.k_batch}"
                out.append(f"ckProfiler {op} {PROFILER_DTYPE[dtype]} {layout} {index}1 1 0 0 {params}{tail}")
        return out

    def to_json(self) -> dict[str, object]:
        return {
            "arch": self.arch, "set": self.set_name, "ck_api": self.ck_api,
            "bounds": {"max_flops": MAX_FLOPS, "max_bytes": MAX_BYTES},
            "optimal": self.optimal, "gap": round(self.gap, 6), "candidates": self.candidates,
            "kernels": self.kernels, "kernels_run": self.kernels_run, "unrunnable": self.unrunnable,
            "items": self.items, "items_covered": self.items_covered,
            "problems": [{"problem": c.problem.text(), "ndim": c.problem.ndim, "k_batch": c.problem.k_batch,
                          "features": c.features, "flops": c.flops, "bytes": c.bytes,
                          "runs": [{"variant": v, "dtype": d} for v, d in c.runs], "kernels": c.kernels}
                         for c in self.problems],
            "coverage": self.coverage,
            "ckprofiler": self.profiler_lines(),
        }


# -- candidates ---------------------------------------------------------------------------------------------------------
def _design(cfg: Mapping[str, object], rng: random.Random) -> list[Problem]:
    """Small problems for one signature (its representative config), varied over the features."""
    ndim = number(cfg, "ndim")
    out: list[Problem] = []
    if cfg["variant"] == "forward_depthwise":
        f, sh, sw, ph, pw = numbers(cfg, "filter_size", "stride_h", "stride_w", "pad_h", "pad_w")
        nb, th, tw = numbers(cfg, "nbatch", "dw_tile_h", "dw_tile_w")
        for _ in range(DESIGN // 2):
            n = nb * rng.choice((1, 1, 2))
            ho, wo = rng.choice((1, 2, min(th, 4))), rng.choice((1, 2, min(tw, 4)))
            hi, wi = (ho - 1) * sh + f - 2 * ph, (wo - 1) * sw + f - 2 * pw
            if hi < 1 or wi < 1:
                hi, wi = max(hi, f), max(wi, f)
            dw = _problem(2, rng.choice((1, 2, 8)), n, 1, 1, (f, f), (hi, wi), (sh, sw), (1, 1), (ph, pw), (ph, pw), 1)
            if dw is not None:
                out.append(dw)
        return out
    spec = text(cfg, "specialization")
    va, vb, vc, ngm = numbers(cfg, "vec_a", "vec_b", "vec_c", "num_groups_to_merge")
    forward = cfg["variant"] == "forward"
    c_unit = math.lcm(vb, va) if forward else math.lcm(vb, vc)
    k_unit = vc if forward else va
    for i in range(DESIGN):
        off = i % 4 == 3  # every fourth leaves the vectors (other signatures may run it)
        filt = {"filter1x1_stride1_pad0": 1, "filter1x1_pad0": 1, "filter3x3": 3}.get(spec, rng.choice((1, 3, 5)))
        stride = 1 if spec == "filter1x1_stride1_pad0" else rng.choice((1, 1, 2))
        dil = 1 if filt == 1 or rng.random() < 0.7 else 2
        pad = 0 if spec in ("filter1x1_stride1_pad0", "filter1x1_pad0") or filt == 1 else rng.choice((0, 1))
        g = ngm * rng.choice((1, 2)) if ngm > 1 else rng.choice((1, 1, 2))
        c = 1 if spec == "filter3x3" else c_unit * rng.choice((1, 2, 3))
        k = k_unit * rng.choice((1, 2, 3))
        if off:
            c, k = rng.choice((1, 3, 6, 12)), rng.choice((1, 3, 6, 12))
        k_batch = rng.choice((1, 1, 2)) if cfg["variant"] != "forward" else 1
        out_len = 4 if ndim == 2 else 3
        inp = (out_len - 1) * stride + dil * (filt - 1) + 1 - 2 * pad
        p = _problem(ndim, g, rng.choice((1, 2)), k, c, (filt,) * ndim, (max(inp, 1),) * ndim, (stride,) * ndim,
                     (dil,) * ndim, (pad,) * ndim, (pad,) * ndim, k_batch)
        if p is not None:
            out.append(p)
    return out


def _value_order(value: str) -> tuple:
    """Feature values in their natural order: 1 < 2 < 16 < 2+, then 1x1 < 3x3 < other."""
    digits = value.rstrip("+")
    return (0, int(digits), value) if digits.isdigit() else (1, 0, value)


def _why_none(rules, rep: Mapping[str, object], rng: random.Random, space: "KernelSpace") -> list[str]:
    """The support rules the problems designed for a kernel break, together: the conditions that contradict each
    other for it (filter3x3's C == 1 against C % vec_a == 0 with vec_a 4, say)."""
    broken: set[str] = set()
    for p in _design(rep, rng):
        broken |= {v.rule for v in S.verdicts(rules, p, rep, space.model.resolve)}
    return sorted(broken)


def _problem(ndim, g, n, k, c, filt, inp, stride, dil, pad_l, pad_r, k_batch) -> Problem | None:
    try:
        p = _checked(Problem(ndim, g, n, k, c, tuple(filt), tuple(inp), tuple(stride), tuple(dil), tuple(pad_l),
                             tuple(pad_r), k_batch))
    except ProblemError:
        return None
    return p if flops(p) <= MAX_FLOPS and tensor_bytes(p) <= MAX_BYTES else None


# -- the selection ------------------------------------------------------------------------------------------------------
def select_problems(space: "KernelSpace", kernels: Sequence[Mapping[str, object]], set_name: str, revision: str,
                    *, seed: int = 0, time_limit: float = TIME_LIMIT) -> ProblemSet:
    """The fewest problems that every kernel of `kernels` runs one of, covering each stratum's feature values."""
    started = time.perf_counter()
    if not kernels:
        raise UsageError(f"the set {set_name} has no kernel here: no problem to choose")
    data = space.data
    rules = S.rules_for(data, revision)
    read = {"variant", "ndim", "dtype"} | {f for r in rules for f in E.fields_of(r.when) | E.fields_of(r.require)}
    groups: dict[tuple, list[Mapping[str, object]]] = {}
    for k in kernels:
        groups.setdefault(tuple((f, k.get(f)) for f in sorted(read)), []).append(k)
    sigs = list(groups)
    reps = [groups[s][0] for s in sigs]
    rng = random.Random(seed)
    pool: dict[Problem, None] = {}
    designed: set[tuple] = set()
    for rep in reps:
        key = tuple(rep.get(f) for f in DESIGN_FIELDS)  # what the design reads: one design per such kernel
        if key in designed:
            continue
        designed.add(key)
        for p in _design(rep, rng):
            pool.setdefault(p, None)
    cands = list(pool)
    runs: list[list[int]] = []  # candidate -> signatures that run it
    for p in cands:
        node = S.condition(rules, p, data, space.arch)
        fn = E.compile_node(node, space.model.resolve, exact=True, lazy_refs=True)
        mine = []
        for j, rep in enumerate(reps):
            try:
                if fn(rep):
                    mine.append(j)
            except (KeyError, ExprError, TypeError, ValueError, ZeroDivisionError):
                continue
        runs.append(mine)
    strata = [stratum_of(r) for r in reps]
    feats = [features(p) for p in cands]
    items: dict[tuple, list[int]] = {}
    for i, mine in enumerate(runs):
        for st in {strata[j] for j in mine}:
            for f, v in feats[i].items():
                items.setdefault((st, f, v), []).append(i)
    by_sig: list[list[int]] = [[] for _ in sigs]
    for i, mine in enumerate(runs):
        for j in mine:
            by_sig[j].append(i)
    chosen, optimal, gap = _cover(cands, by_sig, items, time_limit)
    problems = []
    for i in chosen:
        names = sorted(str(k["name"]) for j in runs[i] for k in groups[sigs[j]])
        pairs = sorted({(str(reps[j]["variant"]), str(reps[j]["dtype"])) for j in runs[i]})
        problems.append(ChosenProblem(cands[i], feats[i], flops(cands[i]), tensor_bytes(cands[i]), names, pairs))
    problems.sort(key=lambda c: (c.problem.ndim, c.problem.text()))
    covered_sigs = {j for i in chosen for j in runs[i]}
    unrunnable: dict[str, list[str]] = {}  # kernel -> the rules every problem designed for it breaks
    for j, sig in enumerate(sigs):
        if by_sig[j]:
            continue
        why = _why_none(rules, reps[j], rng, space)
        for k in groups[sig]:
            unrunnable[str(k["name"])] = why
    coverage: dict[str, dict[str, list[str]]] = {}
    for (st, f, v), members in sorted(items.items()):
        if any(i in set(members) for i in chosen):
            coverage.setdefault(f"{st[0]} {st[1]}d {st[2]}", {}).setdefault(f, []).append(v)
    for reached in coverage.values():
        for values in reached.values():
            values.sort(key=_value_order)
    return ProblemSet(space.arch, set_name, revision, problems, len(kernels),
                      sum(len(groups[s]) for j, s in enumerate(sigs) if j in covered_sigs), unrunnable,
                      len(items), sum(1 for members in items.values() if set(members) & set(chosen)), len(cands),
                      optimal, gap, time.perf_counter() - started, coverage)


def _cover(cands: Sequence[Problem], by_sig: Sequence[Sequence[int]], items: Mapping[tuple, Sequence[int]],
           time_limit: float) -> tuple[list[int], bool, float]:
    """Two deterministic CP-SAT solves (one worker, a deterministic time budget): the fewest problems, then among
    that many the smallest FLOPs. Returns the chosen candidates, whether the count is proven optimal, and its gap."""
    from ortools.sat.python import cp_model

    from ..solve.cpsat import LeanModel, new_solver, solve_stoppably

    cp = LeanModel()
    x = [cp.new_bool_var(f"p{i}") for i in range(len(cands))]
    sets = [list(m) for m in (*by_sig, *items.values()) if m]
    for members in sets:
        cp.add_bool_or([x[i] for i in members])
    greedy = _greedy(len(cands), sets)
    for i, v in enumerate(x):
        cp.add_hint(v, i in greedy)
    cp.minimize(sum(x))
    solver = new_solver(linearization_level=2, max_deterministic_time=time_limit)
    status = solve_stoppably(solver, cp)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        raise UsageError("no set of problems found within the time limit; raise --time-limit")
    count = round(solver.objective_value)
    optimal = status == cp_model.OPTIMAL
    gap = 0.0 if optimal else max(count - solver.best_objective_bound, 0.0) / max(count, 1)
    first = [i for i, v in enumerate(x) if solver.value(v)]
    # second: as few FLOPs as possible with that many problems
    cp.add(sum(x) == count)
    top = max((flops(p) for p in cands), default=1)
    cp.minimize(sum(((1000 * flops(p)) // top) * v for p, v in zip(cands, x)))
    cp.clear_hints()
    for i, v in enumerate(x):
        cp.add_hint(v, i in set(first))
    solver = new_solver(linearization_level=2, max_deterministic_time=max(time_limit / 4, 1.0))
    status = solve_stoppably(solver, cp)
    chosen = [i for i, v in enumerate(x) if solver.value(v)] if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) \
        else first
    return chosen, optimal, gap


def _greedy(n: int, sets: Sequence[Sequence[int]]) -> set[int]:
    """A cover by the greedy rule (the candidate in the most uncovered sets first): the solver's first hint."""
    open_sets = {k: set(m) for k, m in enumerate(sets)}
    chosen: set[int] = set()
    while open_sets:
        counts = [0] * n
        for m in open_sets.values():
            for i in m:
                counts[i] += 1
        best = max(range(n), key=lambda i: (counts[i], -i))
        chosen.add(best)
        open_sets = {k: m for k, m in open_sets.items() if best not in m}
    return chosen


# -- output -------------------------------------------------------------------------------------------------------------
PROFILER = {  # ckProfiler's operation, its layout code for NHWGC/GKYXC/NHWGK, and its data type codes
    "forward": ("grouped_conv_fwd", "1", "0 "),  # then indexing (0: 32-bit) before verification
    "bwd_data": ("grouped_conv_bwd_data", "1", ""),
    "bwd_weight": ("grouped_conv_bwd_weight", "2", ""),
}
PROFILER_DTYPE = {"fp32": "0", "fp16": "1", "bf16": "2"}
