"""A convolution problem, as CK's ckProfiler and examples write it (issue 27's first step): the problem half of "which
kernels run my convolution".

Two spellings are read:

* CK's ConvParam order, blank-separated integers: NDimSpatial, G, N, K, C, the filter lengths, the input lengths,
  the strides, the dilations, the left pads, the right pads (`2 1 32 128 64 3 3 28 28 1 1 1 1 1 1 1 1`);
* keywords, comma-separated: `g=1,n=32,k=128,c=64,y=3,x=3,hi=28,wi=28,stride=1,pad=1` (3D adds z and di; `stride`,
  `dilation` and `pad` set every spatial dimension, `stride_h`, `pad_w`, ... one of them; `pad_left_h`/`pad_right_h`
  one side), with `k_batch=` in either (after the integers: `k_batch=4`).

Derived, as CK's ConvParam computes them: the output lengths (in + pad_left + pad_right - dilation·(filter - 1) - 1)
// stride + 1, which must be positive; and per variant the implicit GEMM each group runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import UsageError

MAX_LENGTH = 1 << 24  # no tensor dimension of a real problem comes near this; a paste error does
SPATIAL_2D = ("h", "w")
SPATIAL_3D = ("d", "h", "w")
FILTER_KEYS = {"d": "z", "h": "y", "w": "x"}  # CK's names of the filter lengths
INPUT_KEYS = {"d": "di", "h": "hi", "w": "wi"}


# What a support rule may read of a problem (`problem.NAME`), with what it means; Problem.values computes it.
VOCABULARY: dict[str, str] = {
    "ndim": "spatial dimensions (NDimSpatial)",
    "g": "groups (G)", "n": "batch (N)", "k": "output channels per group (K)", "c": "input channels per group (C)",
    "k_batch": "split-K batches",
    "filter_1x1": "every filter length is 1", "filter_3x3": "every filter length is 3",
    "stride_1": "every stride is 1", "dilation_1": "every dilation is 1",
    "pad_0": "every left and right pad is 0", "pads_symmetric": "each dimension's left pad equals its right pad",
    "filter_d": "filter depth (Z; 1 in 2D)", "filter_h": "filter height (Y)", "filter_w": "filter width (X)",
    "stride_d": "stride along D (1 in 2D)", "stride_h": "stride along H", "stride_w": "stride along W",
    "pad_h": "left pad along H", "pad_w": "left pad along W",
    "output_h": "output height (Ho)", "output_w": "output width (Wo)",
    "bwd_data_gemms": "GEMMs CK's backward-data kernel runs: the product over dimensions of "
                      "min(stride / gcd(stride, dilation), filter)",
    "bwd_weight_gemm_k": "the GEMM K of backward weight: N times the output lengths",
}


class ProblemError(UsageError):
    """A malformed or impossible convolution problem (exit 2, one line)."""


@dataclass(frozen=True)
class Problem:
    ndim: int
    g: int
    n: int
    k: int
    c: int
    filter: tuple[int, ...]
    input: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    pad_left: tuple[int, ...]
    pad_right: tuple[int, ...]
    k_batch: int = 1

    @property
    def output(self) -> tuple[int, ...]:
        """The output lengths, as CK's ConvParam computes them."""
        return tuple((i + pl + pr - d * (f - 1) - 1) // s + 1 for i, f, s, d, pl, pr in
                     zip(self.input, self.filter, self.stride, self.dilation, self.pad_left, self.pad_right))

    def gemm(self, variant: str) -> tuple[int, int, int]:
        """The implicit GEMM (M, N, K) one group runs: forward (and depthwise) N·Πout × K × C·Πfilter, backward
        data N·Πin × C × K·Πfilter, backward weight K × C·Πfilter × N·Πout."""
        out, filt, inp = math.prod(self.output), math.prod(self.filter), math.prod(self.input)
        if variant in ("forward", "forward_depthwise"):
            return self.n * out, self.k, self.c * filt
        if variant == "bwd_data":
            return self.n * inp, self.c, self.k * filt
        if variant == "bwd_weight":
            return self.k, self.c * filt, self.n * out
        raise ProblemError(f"unknown variant {variant!r}")

    def values(self) -> dict[str, int | bool]:
        """The problem as support rules read it (`problem.NAME`, constraints/support.toml): see VOCABULARY."""
        def spatial(lengths: tuple[int, ...]) -> tuple[int, int, int]:  # (d, h, w); a 2D problem's d is 1
            return (1, *lengths) if len(lengths) == 2 else (lengths[0], lengths[1], lengths[2])

        fd, fh, fw = spatial(self.filter)
        sd, sh, sw = spatial(self.stride)
        # CK's backward-data kernel runs one GEMM per "tilde" offset of each dimension: stride / gcd(stride,
        # dilation) of them, of which those below the filter length hold any filter tap (gemm_count).
        gemms = math.prod(min(s // math.gcd(s, d), f) for s, d, f in zip(self.stride, self.dilation, self.filter))
        return {
            "ndim": self.ndim, "g": self.g, "n": self.n, "k": self.k, "c": self.c, "k_batch": self.k_batch,
            "filter_1x1": all(f == 1 for f in self.filter), "filter_3x3": all(f == 3 for f in self.filter),
            "stride_1": all(s == 1 for s in self.stride), "dilation_1": all(d == 1 for d in self.dilation),
            "pad_0": all(p == 0 for p in (*self.pad_left, *self.pad_right)),
            "pads_symmetric": self.pad_left == self.pad_right,
            "filter_d": fd, "filter_h": fh, "filter_w": fw, "stride_d": sd, "stride_h": sh, "stride_w": sw,
            "pad_h": self.pad_left[-2], "pad_w": self.pad_left[-1],
            "output_h": self.output[-2], "output_w": self.output[-1],
            "bwd_data_gemms": gemms, "bwd_weight_gemm_k": self.gemm("bwd_weight")[2],
        }

    def text(self) -> str:
        """CK's ConvParam order (what ckProfiler takes), with k_batch after it when it is not 1."""
        words = [self.ndim, self.g, self.n, self.k, self.c, *self.filter, *self.input, *self.stride, *self.dilation,
                 *self.pad_left, *self.pad_right]
        return " ".join(map(str, words)) + (f" k_batch={self.k_batch}" if self.k_batch != 1 else "")


def parse_problem(text: str) -> Problem:
    """A problem from either spelling (see the module doc); anything else is one ProblemError line."""
    if not isinstance(text, str) or not text.strip():
        raise ProblemError("--problem needs a problem: CK's ConvParam integers or g=..,n=..,k=..,c=.. keywords")
    if len(text) > 1000:
        raise ProblemError(f"--problem: {len(text):,} characters; a problem is a few dozen")
    words = text.replace(",", " ").split()
    keyed = [w for w in words if "=" in w]
    plain = [w for w in words if "=" not in w]
    if plain and any(not w.startswith("k_batch=") for w in keyed):
        raise ProblemError("--problem: give CK's ConvParam integers or keywords, not both (only k_batch= may follow "
                           "the integers)")
    values = {}
    for w in keyed:
        key, _, value = w.partition("=")
        key = key.strip().lower()
        if key in values:
            raise ProblemError(f"--problem: {key} given twice")
        values[key] = _integer(value, key)
    k_batch = values.pop("k_batch", 1)
    problem = _positional(plain, k_batch) if plain else _keywords(values, k_batch)
    return _checked(problem)


def _integer(word: str, what: str) -> int:
    word = word.strip()
    if not (word.isascii() and word.lstrip("-").isdigit()) or len(word) > 12:
        raise ProblemError(f"--problem: {what} must be an integer, not {word[:20]!r}")
    return int(word)


def _positional(words: list[str], k_batch: int) -> Problem:
    ints = [_integer(w, f"value {i + 1}") for i, w in enumerate(words)]
    ndim = ints[0]
    if ndim not in (2, 3):
        raise ProblemError(f"--problem: NDimSpatial must be 2 or 3, not {ndim}")
    want = 5 + 6 * ndim
    if len(ints) != want:
        raise ProblemError(f"--problem: a {ndim}D problem is {want} integers (NDimSpatial, G, N, K, C, then "
                           f"{ndim} each of filter, input, strides, dilations, left pads, right pads), not {len(ints)}")
    g, n, k, c = ints[1:5]
    rest = ints[5:]
    filt, inp, stride, dilation, pad_left, pad_right = (tuple(rest[i * ndim:(i + 1) * ndim]) for i in range(6))
    return Problem(ndim, g, n, k, c, filt, inp, stride, dilation, pad_left, pad_right, k_batch)


def _keywords(values: dict[str, int], k_batch: int) -> Problem:
    ndim = 3 if ("z" in values or "di" in values) else 2
    dims = SPATIAL_3D if ndim == 3 else SPATIAL_2D
    used: set[str] = set()

    def take(key: str, default: int | None = None) -> int:
        if key in values:
            used.add(key)
            return values[key]
        if default is None:
            needs = ", ".join([*(FILTER_KEYS[d] for d in dims), *(INPUT_KEYS[d] for d in dims)])
            raise ProblemError(f"--problem: {key}= is missing (a {ndim}D problem needs n, k, c, {needs})")
        return default

    def per_dim(name: str, default: int) -> tuple[int, ...]:
        common = take(name, default)
        return tuple(take(f"{name}_{d}", common) for d in dims)

    g, n, k, c = take("g", 1), take("n"), take("k"), take("c")
    filt = tuple(take(FILTER_KEYS[d]) for d in dims)
    inp = tuple(take(INPUT_KEYS[d]) for d in dims)
    stride = per_dim("stride", 1)
    dilation = per_dim("dilation", 1)
    pad = take("pad", 0)
    pad_left = tuple(take(f"pad_left_{d}", take(f"pad_{d}", pad)) for d in dims)
    pad_right = tuple(take(f"pad_right_{d}", take(f"pad_{d}", pad)) for d in dims)
    unknown = sorted(set(values) - used)
    if unknown:
        raise ProblemError(f"--problem: unknown key {unknown[0]!r} for a {ndim}D problem")
    return Problem(ndim, g, n, k, c, filt, inp, stride, dilation, pad_left, pad_right, k_batch)


def _checked(p: Problem) -> Problem:
    for name, value in (("G", p.g), ("N", p.n), ("K", p.k), ("C", p.c), ("k_batch", p.k_batch)):
        if not 1 <= value <= MAX_LENGTH:
            raise ProblemError(f"--problem: {name} must be between 1 and {MAX_LENGTH:,}, not {value}")
    for name, lengths, low in (("filter", p.filter, 1), ("input", p.input, 1), ("stride", p.stride, 1),
                               ("dilation", p.dilation, 1), ("left pad", p.pad_left, 0),
                               ("right pad", p.pad_right, 0)):
        for value in lengths:
            if not low <= value <= MAX_LENGTH:
                raise ProblemError(f"--problem: a {name} length must be between {low} and {MAX_LENGTH:,}, not {value}")
    for i, out in enumerate(p.output):
        if out <= 0:
            raise ProblemError(f"--problem: output length {out} in spatial dimension {i} (input {p.input[i]}, "
                               f"filter {p.filter[i]}, dilation {p.dilation[i]}, pads {p.pad_left[i]}+"
                               f"{p.pad_right[i]}): the filter does not fit the padded input")
    return p


# Values a random problem draws from: small, and on both sides of what the support rules test (vector widths,
# merged groups, the filter and stride specializations, bwd_data's 128 GEMMs, split-K's limits).
RANDOM_CHANNELS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 36, 48, 60, 64, 96, 128)
RANDOM_GROUPS = (1, 2, 3, 4, 8, 16)
RANDOM_FILTERS = (1, 1, 3, 3, 5, 2)
RANDOM_STRIDES = (1, 1, 2, 3)
RANDOM_K_BATCH = (1, 1, 2, 3, 4, 8)


def random_problem(rng, ndim: int) -> Problem:
    """A random valid problem of `ndim` spatial dimensions (rng: a random.Random), small enough to run in
    milliseconds; now and then a large stride and filter (backward data's GEMM count) or a large k_batch."""
    wide = rng.random() < 0.05
    filt = tuple(rng.choice((12, 16)) if wide else rng.choice(RANDOM_FILTERS) for _ in range(ndim))
    stride = tuple(rng.choice((11, 12)) if wide else rng.choice(RANDOM_STRIDES) for _ in range(ndim))
    dilation = tuple(1 if wide or rng.random() < 0.8 else 2 for _ in range(ndim))
    pad_left = tuple(0 if rng.random() < 0.5 else rng.choice((1, 2)) for _ in range(ndim))
    pad_right = tuple(p if rng.random() < 0.8 else rng.choice((0, 1, 2)) for p in pad_left)
    inp = tuple(max(d * (f - 1) + 1 - pl - pr, 1) + rng.choice((0, 1, 2, 5, 9)) for f, d, pl, pr in
                zip(filt, dilation, pad_left, pad_right))
    k_batch = rng.choice((129, 256)) if rng.random() < 0.02 else rng.choice(RANDOM_K_BATCH)
    return _checked(Problem(ndim, rng.choice(RANDOM_GROUPS), rng.choice((1, 1, 2, 3, 4, 8)),
                            rng.choice(RANDOM_CHANNELS), rng.choice(RANDOM_CHANNELS), filt, inp, stride, dilation,
                            pad_left, pad_right, k_batch))
