"""CK's kernel-name grammar (CK's unified_grouped_conv_codegen.py GroupedConvKernelConfig.name and
DepthwiseConvKernelConfig.name): parse a name into fields and format fields into a name.

Parsing is syntactic on purpose: a well-formed name with values that make no valid kernel (pipeline compv5, tile
96x64x32, dtype fp8) still parses, because the model, not the parser, explains why such a kernel is invalid.
Names are identifiers, so only the canonical spelling is accepted: a redundant default suffix or suffixes out of
order are errors whose suggestion is the canonical name. Every suggestion is itself a parseable canonical name.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Mapping, Sequence
from typing import Any, SupportsIndex, cast

from ..memo import cached, memo
from ..errors import KernelNameError

__all__ = ["parse_name", "format_name"]

VARIANT_TAGS = {"forward": "fwd", "bwd_data": "bwd_data", "bwd_weight": "bwd_weight"}
# The variant as an option value (--variant, a trait config's "variant"): ckspace's words and CK's (the names' fwd, the
# dispatcher's and profiler's fwd/bwdd/bwdw, backward_data, ...), lower case.
VARIANT_SPELLINGS = {
    "forward": "forward", "fwd": "forward",
    "bwd_data": "bwd_data", "bwdd": "bwd_data", "backward_data": "bwd_data", "bwd-data": "bwd_data",
    "bwd_weight": "bwd_weight", "bwdw": "bwd_weight", "backward_weight": "bwd_weight", "bwd-weight": "bwd_weight",
    "forward_depthwise": "forward_depthwise", "fwd_depthwise": "forward_depthwise", "depthwise": "forward_depthwise",
}
# Spellings whose meaning is obvious; they are suggested as the canonical tag, never accepted.
VARIANT_ALIASES = {
    ("forward",): "fwd", ("backward", "data"): "bwd_data", ("backward", "weight"): "bwd_weight",
    ("bwddata",): "bwd_data", ("bwdweight",): "bwd_weight", ("bwd", "weights"): "bwd_weight",
    ("backward", "weights"): "bwd_weight",
}
KNOWN_PIPELINES = (
    "compv1", "compv2", "compv3", "compv4", "compv5", "compv6", "mem", "wavelet", "basic_v1", "basic_v2",
    "basic_async_v1", "comp_async", "preshufflev1", "preshufflev2",
)
EPILOGUES = ("cshuffle", "default")
SCHEDULERS = ("intrawave", "interwave")
SPECIALIZATIONS = ("filter1x1_stride1_pad0", "filter1x1_pad0", "filter3x3")  # longest first: they share tokens
STREAMK = ("tree", "linear")
DEFAULT_VEC = (4, 8, 8)
SUFFIX_ORDER = ("vec", "wg", "gm", "dsb", "2stage", "specialization", "explicit_gemm", "streamk", "persistent",
                "large_tensor", "pad")
SUFFIX_HELP = ("one of these suffixes, in this order: _vec{a}_{b}_{c}, _wg{n}, _gm{n}, _dsb, _2stage, "
               "_filter1x1_pad0 | _filter1x1_stride1_pad0 | _filter3x3, _explicit_gemm, "
               "_streamk_{tree|linear}[_persistent], _large_tensor, _pad{m}{n}{k}")
PIPELINE_HELP = ("a pipeline (compv1..compv6, mem, wavelet, basic_v1, basic_v2, basic_async_v1, comp_async, "
                 "preshufflev1, preshufflev2) followed by _{epilogue}_{scheduler}")
REDUNDANT = {
    "vec": "no _vec suffix when the vector sizes are the default 4_8_8",
    "wg": "no _wg suffix when num_wave_groups is 1",
    "gm": "no _gm suffix when num_groups_to_merge is 1",
    "specialization": "no suffix for the default specialization",
    "pad": "no _pad suffix when all three pads are on",
}
TRIPLE = "MxNxK, three integers"
MAX_DIGITS = 18  # CP-SAT works in int64; also keeps int() clear of Python's 4300-digit limit

WORD = re.compile(r"[a-z][a-z0-9]*")
# A token that starts a suffix: seen where a tile triple should be, it means the triple is missing.
SUFFIX_START = re.compile(r"vec\d*|wg\d*|gm\d*|dsb|2stage|filter.*|explicit|streamk|large|pad\d*|default")


class _Bad(Exception):
    """Internal: one parse failure, plus a repaired name to try for the suggestion."""

    def __init__(self, part: str, expected: str, got: str = "", candidate: str | None = None):
        super().__init__(part)
        self.part, self.expected, self.got, self.candidate = part, expected, got, candidate


class _Cursor:
    """The name split at underscores, read left to right. Multi-token values (bwd_data, basic_async_v1,
    filter1x1_pad0, vec8_8_8) are assembled from several tokens by the readers below."""

    def __init__(self, name: str):
        self.tokens = name.split("_")
        self.i = 0

    def more(self) -> bool:
        return self.i < len(self.tokens)

    def peek(self, k: int = 0) -> str | None:
        j = self.i + k
        return self.tokens[j] if j < len(self.tokens) else None

    def take(self, part: str, expected: str) -> str:
        if not self.more():
            raise _Bad(part, f"{expected}; it is missing, the name ends before it")
        self.i += 1
        return self.tokens[self.i - 1]

    def replaced(self, start: int, stop: int, text: str | None) -> str:
        """The name with tokens[start:stop] replaced by `text` (removed when None)."""
        return "_".join(self.tokens[:start] + ([] if text is None else [text]) + self.tokens[stop:])

    def word(self, part: str, expected: str) -> str:
        tok = self.take(part, expected)
        if not WORD.fullmatch(tok):
            raise _Bad(part, expected, tok)
        return tok

    def ints(self, part: str, expected: str, n: int, head: str = "", sep: str = "x", tail: str = "",
             start: int | None = None) -> list[int]:
        """Read `head` n integers joined by `sep`, then `tail`. With sep "_" the integers span several tokens
        (all following all-digit tokens are taken, so that a wrong count is reported as one part)."""
        start = self.i if start is None else start
        text = self.take(part, expected)
        if sep == "_":
            while (nxt := self.peek()) is not None and nxt.isdigit():
                text += "_" + self.take(part, expected)
        m = _ints_pattern(head, sep, n, tail).fullmatch(text)
        if not m:
            if sep == "x" and n == 3 and SUFFIX_START.fullmatch(text):
                expected += "; it is missing"
            raise _Bad(part, expected, text)
        digits = m.groups()
        if any(len(d) > MAX_DIGITS for d in digits):
            raise _Bad(part, f"{expected} of at most {MAX_DIGITS} digits", text)
        if any(len(d) > 1 and d[0] == "0" for d in digits):
            fixed = head + sep.join(str(int(d)) for d in digits) + tail
            raise _Bad(part, f"{expected}, without leading zeros", text, self.replaced(start, self.i, fixed))
        return [int(d) for d in digits]


@cached("rules.names.ints_pattern", maxsize=64)
def _ints_pattern(head: str, sep: str, n: int, tail: str) -> re.Pattern[str]:
    digit = "([0-9])" if sep == "" else "([0-9]+)"  # pad{m}{n}{k}: one digit each
    return re.compile(re.escape(head) + re.escape(sep).join([digit] * n) + re.escape(tail))


def _pipeline_split_ok(tokens: list[str]) -> bool:
    """Whether these pipeline tokens read back as one pipeline: all words, and no epilogue+scheduler pair inside
    (the parser ends the pipeline at the first such pair after its first token)."""
    if not tokens or not all(WORD.fullmatch(t) for t in tokens):
        return False
    return not any(tokens[k] in EPILOGUES and tokens[k + 1] in SCHEDULERS for k in range(1, len(tokens) - 1))


def _parse_prefix_variant(cur: _Cursor, name: str) -> str:
    if cur.tokens[:2] != ["grouped", "conv"]:
        rest = list(cur.tokens)
        while rest and rest[0].lower() in ("grouped", "conv", "groupedconv", ""):
            rest.pop(0)
        raise _Bad("prefix", "grouped_conv_", "_".join(cur.tokens[:2]),
                   "_".join(["grouped", "conv", *rest]) if rest else None)
    cur.i = 2
    t0, t1 = cur.peek(), cur.peek(1)
    if t0 == "fwd":
        cur.i += 2 if t1 == "depthwise" else 1
        return "forward_depthwise" if t1 == "depthwise" else "forward"
    if t0 == "bwd" and t1 in ("data", "weight"):
        cur.i += 2
        return f"bwd_{t1}"
    expected = "fwd, bwd_data, bwd_weight or fwd_depthwise"
    if t0 is None:
        raise _Bad("variant", f"{expected}; it is missing")
    for alias, tag in VARIANT_ALIASES.items():
        if tuple(cur.tokens[cur.i:cur.i + len(alias)]) == alias:
            raise _Bad("variant", expected, "_".join(alias), cur.replaced(cur.i, cur.i + len(alias), tag))
    raise _Bad("variant", expected, f"{t0}_{t1}" if t0 == "bwd" and t1 is not None else t0)


def _parse_pipeline(cur: _Cursor) -> tuple[str, str, str]:
    toks, start = cur.tokens, cur.i
    # Pipelines contain underscores and may be unknown, so the pipeline runs up to the first epilogue+scheduler pair.
    def pair_at(e: int) -> bool:
        return toks[e] in EPILOGUES and toks[e + 1] in SCHEDULERS

    e = start + 1
    while e + 1 < len(toks) and WORD.fullmatch(toks[e - 1]) and not pair_at(e):
        e += 1
    if e + 1 < len(toks) and _pipeline_split_ok(toks[start:e]):
        cur.i = e + 2
        return "_".join(toks[start:e]), toks[e], toks[e + 1]
    # No pair: report the first of pipeline, epilogue, scheduler that is wrong.
    if start + 1 < len(toks) and toks[start] in EPILOGUES and toks[start + 1] in SCHEDULERS:
        raise _Bad("pipeline", f"{PIPELINE_HELP}; it is missing", toks[start])
    known = [p for p in KNOWN_PIPELINES if toks[start:start + p.count("_") + 1] == p.split("_")]
    cur.word("pipeline", PIPELINE_HELP)
    cur.i = start + (max(p.count("_") for p in known) + 1 if known else 1)
    epilogue = cur.take("epilogue", "cshuffle or default")
    if epilogue not in EPILOGUES:
        raise _Bad("epilogue", "cshuffle or default", epilogue)
    raise _Bad("scheduler", "intrawave or interwave", cur.take("scheduler", "intrawave or interwave"))


def _parse_suffixes(cur: _Cursor, f: dict[str, object]) -> list[tuple[str, str]]:
    """Read the optional suffixes into `f`. Returns (slot, problem part) pairs in the order read; out-of-order,
    repeated and redundant suffixes are judged afterwards, against the canonical name."""
    slots: list[tuple[str, str]] = []
    values: dict[str, object] = {}

    def put(slot: str, value: object, part: str, redundant: bool = False) -> None:
        if slot in values and values[slot] != value:
            raise _Bad(part, "each suffix at most once", "_".join(cur.tokens[start:cur.i]))
        values[slot] = value
        slots.append((slot, part if redundant else ""))

    while cur.more():
        start, tok = cur.i, cur.tokens[cur.i]
        if tok.startswith("vec"):
            a, b, c = cur.ints("vec", "vec{a}_{b}_{c}, three integers", 3, head="vec", sep="_")
            f["vec_a"], f["vec_b"], f["vec_c"] = a, b, c
            put("vec", (a, b, c), "vec", (a, b, c) == DEFAULT_VEC)
        elif tok.startswith(("wg", "gm")):
            key = "num_wave_groups" if tok.startswith("wg") else "num_groups_to_merge"
            (f[key],) = cur.ints(tok[:2], f"{tok[:2]}{{n}}, an integer", 1, head=tok[:2])
            put(tok[:2], f[key], tok[:2], f[key] == 1)
        elif tok in ("dsb", "2stage"):
            cur.i += 1
            f["double_smem_buffer" if tok == "dsb" else "two_stage"] = True
            put(tok, True, "suffix")
        elif tok.startswith("filter") or tok == "default":
            spec = next((s for s in SPECIALIZATIONS if cur.tokens[start:start + s.count("_") + 1] == s.split("_")),
                        "default" if tok == "default" else None)
            if spec is None:
                raise _Bad("specialization", "filter1x1_pad0, filter1x1_stride1_pad0 or filter3x3", tok)
            cur.i += spec.count("_") + 1
            f["specialization"] = spec
            put("specialization", spec, "specialization", spec == "default")
        elif tok == "explicit" and cur.peek(1) == "gemm":
            cur.i += 2
            f["explicit_gemm"] = True
            put("explicit_gemm", True, "suffix")
        elif tok == "streamk":
            strategy = cur.peek(1)
            if strategy not in STREAMK:
                raise _Bad("streamk", "streamk_tree or streamk_linear", "_".join(cur.tokens[start:start + 2]))
            cur.i += 2
            f["streamk"] = strategy
            put("streamk", strategy, "streamk")
            if cur.peek() == "persistent":
                cur.i += 1
                f["streamk_persistent"] = True
                put("persistent", True, "streamk")
        elif tok == "persistent":  # not right after _streamk_{strategy}: an ordering problem, judged below
            cur.i += 1
            f["streamk_persistent"] = True
            put("persistent", True, "streamk")
        elif tok == "large" and cur.peek(1) == "tensor":
            cur.i += 2
            f["split_image"] = True
            put("large_tensor", True, "suffix")
        elif tok.startswith("pad"):
            m, n, k = cur.ints("pad", "pad{m}{n}{k}, three 0/1 digits", 3, head="pad", sep="")
            if max(m, n, k) > 1:
                raise _Bad("pad", "pad{m}{n}{k}, three 0/1 digits", tok)
            f["pad_m"], f["pad_n"], f["pad_k"] = bool(m), bool(n), bool(k)
            put("pad", (m, n, k), "pad", (m, n, k) == (1, 1, 1))
        elif re.fullmatch(r"bpc[0-9]+", tok):
            raise _Bad("suffix", "no _bpc suffix: block_per_cu is derived from the pipeline, not named", tok,
                       cur.replaced(start, start + 1, None))
        else:
            raise _Bad("suffix", SUFFIX_HELP, tok)
    return slots


def _parse_gemm(cur: _Cursor, f: dict[str, object], name: str) -> dict[str, object]:
    f["kind"] = "gemm"
    f["pipeline"], f["epilogue"], f["scheduler"] = _parse_pipeline(cur)
    for part, keys in (("tile", ("tile_m", "tile_n", "tile_k")), ("wave", ("wave_m", "wave_n", "wave_k")),
                       ("warp_tile", ("warp_tile_m", "warp_tile_n", "warp_tile_k"))):
        f.update(zip(keys, cur.ints(part, TRIPLE, 3)))
    f.update(vec_a=4, vec_b=8, vec_c=8, num_wave_groups=1, num_groups_to_merge=1, double_smem_buffer=False,
             two_stage=False, specialization="default", explicit_gemm=False, streamk="none",
             streamk_persistent=False, split_image=False, pad_m=True, pad_n=True, pad_k=True)
    slots = _parse_suffixes(cur, f)
    if f["streamk_persistent"] and f["streamk"] == "none":
        raise _Bad("streamk", "_persistent only right after _streamk_{tree|linear}", "persistent")
    canonical = fast_name(f)  # = format_name(f), at a fraction of the cost (the thousands of names of CK's lists)
    if canonical != name:  # only suffix spelling can differ: the head was read exactly
        names = [s for s, _ in slots]
        redundant = next((part for _, part in slots if part), None)
        if len(set(names)) < len(names):
            raise _Bad("suffix", "each suffix at most once", "", canonical)
        if redundant:
            raise _Bad(redundant, REDUNDANT[redundant], "", canonical)
        raise _Bad("suffix", "suffixes in the order " + ", ".join(SUFFIX_ORDER), "", canonical)
    return f


def _parse_depthwise(cur: _Cursor, f: dict[str, object]) -> dict[str, object]:
    f["kind"] = "depthwise"
    f["dw_tile_h"], f["dw_tile_w"] = cur.ints("tile", "HxW, two integers", 2)
    (f["filter_size"],) = cur.ints("filter", "f{F}, one integer", 1, head="f")
    f["stride_h"], f["stride_w"] = cur.ints("stride", "s{H}x{W}, two integers", 2, head="s")
    f["pad_h"], f["pad_w"] = cur.ints("pad", "p{H}x{W}, two integers", 2, head="p")
    (f["nbatch"],) = cur.ints("nbatch", "nb{N}, one integer", 1, head="nb")
    f["sub_h"], f["sub_w"] = cur.ints("sub", "sub{H}x{W}, two integers", 2, head="sub")
    f["in_vec"], f["out_vec"] = cur.ints("vec", "vec{in}_{out}, two integers", 2, head="vec", sep="_")
    if cur.more():
        raise _Bad("suffix", "nothing after _vec{in}_{out}: depthwise names have no suffixes",
                   "_".join(cur.tokens[cur.i:]), cur.replaced(cur.i, len(cur.tokens), None).rstrip("_"))
    return f


def _parse(name: str) -> dict[str, object]:
    cur = _Cursor(name)
    f: dict[str, object] = {"variant": _parse_prefix_variant(cur, name)}
    f["dtype"] = cur.word("dtype", "a lower-case data type such as fp16, bf16 or fp32")
    if re.fullmatch(r"[0-9]+d", cur.peek() or ""):  # e.g. grouped_conv_fwd_fp16_2d_...
        raise _Bad("layout", "{dtype}_{layout} before the ndim, e.g. fp16_nhwgc; one of them is missing",
                   cast(str, cur.peek()))  # the token just matched
    f["layout"] = cur.word("layout", "a lower-case layout such as nhwgc or ngchw")
    (f["ndim"],) = cur.ints("ndim", "the spatial dimensions as {n}d, e.g. 2d", 1, tail="d")
    return _parse_depthwise(cur, f) if f["variant"] == "forward_depthwise" else _parse_gemm(cur, f, name)


def _suggest(name: str, bad: _Bad, depth: int = 0) -> str | None:
    """The first repair of `name` that parses, following repairs of repairs a few levels deep."""
    candidates = [bad.candidate, name.strip(), name.lower(), name.strip().lower()]
    for cand in dict.fromkeys(c for c in candidates if c and c != name):
        try:
            _parse(cand)
            return cand
        except _Bad as again:
            if depth < 3 and (found := _suggest(cand, again, depth + 1)):
                return found
    return None


def parse_name(name: str) -> dict[str, object]:
    """Fields of a canonical kernel name; KernelNameError for anything else."""
    if not isinstance(name, str):
        raise TypeError(f"kernel name must be a str, not {type(name).__name__}")
    try:
        return _parse(name)
    except _Bad as bad:
        if any(c.isupper() for c in bad.got):
            bad.expected += "; names are lower case"
        raise KernelNameError(name, bad.part, bad.expected, bad.got, _suggest(name, bad)) from None


def _num(fields: Mapping[str, object], key: str) -> int:
    # accepts numpy / CP-SAT integers, rejects floats and strings (the cast: what it accepts, not what it is given)
    value = operator.index(cast(SupportsIndex, fields[key]))
    if value < 0 or len(str(value)) > MAX_DIGITS:
        raise ValueError(f"{key} must be a non-negative integer of at most {MAX_DIGITS} digits, not {value}")
    return value


def _flag(fields: Mapping[str, object], key: str) -> bool:
    return bool(operator.index(cast(SupportsIndex, fields[key])))  # anything else raises, as in _num


def _word(fields: Mapping[str, object], key: str) -> str:
    value = fields[key]
    if not isinstance(value, str) or not WORD.fullmatch(value):
        raise ValueError(f"{key} must be a lower-case word such as fp16 or nhwgc, not {value!r}")
    return value


def format_name(fields: Mapping[str, object]) -> str:
    """The canonical name of a field dict as parse_name returns it (extra keys are ignored)."""
    depthwise = _kind_of(fields) == "dw"
    head = f"{_word(fields, 'dtype')}_{_word(fields, 'layout')}_{_num(fields, 'ndim')}d"
    if depthwise:
        n = {k: _num(fields, k) for k in ("dw_tile_h", "dw_tile_w", "filter_size", "stride_h", "stride_w", "pad_h",
                                           "pad_w", "nbatch", "sub_h", "sub_w", "in_vec", "out_vec")}
        return (f"grouped_conv_fwd_depthwise_{head}_{n['dw_tile_h']}x{n['dw_tile_w']}_f{n['filter_size']}"
                f"_s{n['stride_h']}x{n['stride_w']}_p{n['pad_h']}x{n['pad_w']}_nb{n['nbatch']}"
                f"_sub{n['sub_h']}x{n['sub_w']}_vec{n['in_vec']}_{n['out_vec']}")
    tag = VARIANT_TAGS.get(cast(str, fields["variant"]))  # any other value finds no tag (or raises, unhashable)
    if tag is None:
        raise ValueError(f"variant must be one of {', '.join(VARIANT_TAGS)} or forward_depthwise")
    if tag == "fwd" and fields["dtype"] == "depthwise":
        raise ValueError("dtype 'depthwise' would read back as a depthwise kernel")
    pipeline, epilogue, scheduler = fields["pipeline"], fields["epilogue"], fields["scheduler"]
    if not isinstance(pipeline, str) or not _pipeline_split_ok(pipeline.split("_")):
        raise ValueError(f"pipeline {pipeline!r} is not a name that reads back as one pipeline")
    if epilogue not in EPILOGUES or scheduler not in SCHEDULERS:
        raise ValueError(f"epilogue must be one of {EPILOGUES} and scheduler one of {SCHEDULERS}")
    triples = [
        "x".join(str(_num(fields, f"{p}_{d}")) for d in "mnk") for p in ("tile", "wave", "warp_tile")
    ]
    name = f"grouped_conv_{tag}_{head}_{pipeline}_{epilogue}_{scheduler}_" + "_".join(triples)
    vec = (_num(fields, "vec_a"), _num(fields, "vec_b"), _num(fields, "vec_c"))
    if vec != DEFAULT_VEC:
        name += "_vec{}_{}_{}".format(*vec)
    for key, short in (("num_wave_groups", "wg"), ("num_groups_to_merge", "gm")):
        if (value := _num(fields, key)) != 1:
            name += f"_{short}{value}"
    name += "_dsb" * _flag(fields, "double_smem_buffer") + "_2stage" * _flag(fields, "two_stage")
    spec = fields["specialization"]
    if spec != "default":
        if spec not in SPECIALIZATIONS:
            raise ValueError(f"specialization must be default or one of {SPECIALIZATIONS}, not {spec!r}")
        name += f"_{spec}"
    name += "_explicit_gemm" * _flag(fields, "explicit_gemm")
    streamk, persistent = fields["streamk"], _flag(fields, "streamk_persistent")
    if streamk not in ("none", *STREAMK) or (persistent and streamk == "none"):
        raise ValueError(f"streamk must be none, tree or linear (persistent only with tree or linear), not {streamk!r}")
    if streamk != "none":
        name += f"_streamk_{streamk}" + "_persistent" * persistent
    name += "_large_tensor" * _flag(fields, "split_image")
    pads = (_flag(fields, "pad_m"), _flag(fields, "pad_n"), _flag(fields, "pad_k"))
    if not all(pads):
        name += "_pad" + "".join(str(int(p)) for p in pads)
    return name


# tuples of text values (per kind) that format_name's checks have passed
_CHECKED_TEXT: set[tuple] = memo("rules.names.checked_text", set())
_INT_BOUND = 10**MAX_DIGITS
_INT_TYPE = {int}
_GEMM_INTS = ("ndim", "tile_m", "tile_n", "tile_k", "wave_m", "wave_n", "wave_k", "warp_tile_m", "warp_tile_n",
              "warp_tile_k", "vec_a", "vec_b", "vec_c", "num_wave_groups", "num_groups_to_merge")
_GEMM_TEXTS = ("variant", "dtype", "layout", "pipeline", "epilogue", "scheduler", "specialization", "streamk",
               "streamk_persistent")
_DW_INTS = ("ndim", "dw_tile_h", "dw_tile_w", "filter_size", "stride_h", "stride_w", "pad_h", "pad_w", "nbatch",
            "sub_h", "sub_w", "in_vec", "out_vec")
_DW_TEXTS = ("dtype", "layout")
_FLAGS = ("double_smem_buffer", "two_stage", "explicit_gemm", "split_image", "pad_m", "pad_n", "pad_k")
_FLAG_TYPES = {bool, int}  # a flag is true/false or 0/1


def fast_name(fields: Mapping[str, object]) -> str:
    """format_name, byte for byte, at a fraction of its cost: name_rows of one row, with the row's own checks (a
    text combination format_name has not accepted yet goes through name_rows, which asks it)."""
    keys, row = tuple(fields), tuple(fields.values())
    fmt = _formatter(keys, _kind_of(fields))
    if fmt is not None and _row_ok(fmt, row):
        return fmt.name(row)
    return name_rows(keys, [row])[0]


def _row_ok(fmt: "_Formatter", row: tuple) -> bool:
    """The checks of _rows_ok on one row, for a text combination format_name has accepted already."""
    try:
        ints = fmt.ints(row)
        return (set(map(type, ints)) == _INT_TYPE and min(ints) >= 0 and max(ints) < _INT_BOUND
                and (fmt.flags is None or set(map(type, fmt.flags(row))) <= _FLAG_TYPES)
                and (fmt.kind, *fmt.texts(row)) in _CHECKED_TEXT)
    except TypeError:  # an unhashable or unordered value: name_rows says what format_name says
        return False


def name_rows(keys: Sequence[str], rows: Sequence[tuple], domains: Mapping[str, Any] | None = None) -> list[str]:
    """format_name of each row of values (in `keys` order), byte for byte, for the thousands of a listing.

    format_name checks every value of every call. Here the rows are checked column by column, in C-level passes:
    each distinct combination of text values by format_name itself, the first time it is seen, and the integers
    and flags by type and size; then one formatter compiled for the key order names every row. Rows that fail a
    check, or keys this fast path does not know, are named by format_name row by row, which fails as it fails.
    tests/test_fast_paths.py compares the two on every kernel of every catalog and on random configs.

    `domains` (field name -> FieldDef) promises that every integer and flag of the rows is a value of its field's
    domain (rows a solve decoded): those columns are then checked on the domains, once, instead of on the rows."""
    if not rows:
        return []
    fmt = _formatter(tuple(keys), _row_kind(keys, rows[0]))
    if fmt is not None and _rows_ok(fmt, keys, rows, domains):
        return list(map(fmt.name, rows))
    out = []
    for row in rows:
        fields = dict(zip(keys, row))
        out.append(format_name(fields))
    if fmt is not None:  # every row named: their text combinations are checked from now on
        for row in rows:
            try:
                _CHECKED_TEXT.add((fmt.kind, *fmt.texts(row)))
            except TypeError:  # an unhashable value: never fast
                pass
    return out


def _kind_of(fields: Mapping[str, object]) -> str:
    """The kernel family a config is named as: depthwise ("dw") or GEMM."""
    return "dw" if fields.get("kind") == "depthwise" or fields.get("variant") == "forward_depthwise" else "gemm"


def _row_kind(keys: Sequence[str], row: tuple) -> str:
    return _kind_of(dict(zip(keys, row)))


class _Formatter:
    """Names rows of one key order and kernel family: getters of the checked columns and the compiled name."""

    def __init__(self, kind: str, index: Mapping[str, int], ints: Sequence[str], texts: Sequence[str],
                 flags: Sequence[str], source: str):
        self.kind = kind
        self.index = index
        self.ints = operator.itemgetter(*(index[k] for k in ints))
        self.texts = operator.itemgetter(*(index[k] for k in texts))
        self.flags = operator.itemgetter(*(index[k] for k in flags)) if flags else None
        self.name = eval(source, {"T": VARIANT_TAGS, "DV": DEFAULT_VEC})  # noqa: S307 (our own template)


@cached("rules.names.formatter", maxsize=64)
def _formatter(keys: tuple[str, ...], kind: str) -> _Formatter | None:
    """The compiled namer of a key order (None: a needed field is missing, or a key repeats)."""
    index = {k: i for i, k in enumerate(keys)}
    ints, texts, flags = (_DW_INTS, _DW_TEXTS, ()) if kind == "dw" else (_GEMM_INTS, _GEMM_TEXTS, _FLAGS)
    if len(index) != len(keys) or not all(k in index for k in (*ints, *texts, *flags)):
        return None

    def v(key: str) -> str:
        return f"r[{index[key]}]"

    if kind == "dw":
        source = ('lambda r: f"grouped_conv_fwd_depthwise_{%s}_{%s}_{%s}d_{%s}x{%s}_f{%s}_s{%s}x{%s}_p{%s}x{%s}'
                  '_nb{%s}_sub{%s}x{%s}_vec{%s}_{%s}"'
                  % tuple(v(k) for k in ("dtype", "layout", "ndim", "dw_tile_h", "dw_tile_w", "filter_size",
                                         "stride_h", "stride_w", "pad_h", "pad_w", "nbatch", "sub_h", "sub_w",
                                         "in_vec", "out_vec")))
    else:
        head = ('f"grouped_conv_{T[%s]}_{%s}_{%s}_{%s}d_{%s}_{%s}_{%s}_{%s}x{%s}x{%s}_{%s}x{%s}x{%s}_{%s}x{%s}x{%s}"'
                % tuple(v(k) for k in ("variant", "dtype", "layout", "ndim", "pipeline", "epilogue", "scheduler",
                                       "tile_m", "tile_n", "tile_k", "wave_m", "wave_n", "wave_k", "warp_tile_m",
                                       "warp_tile_n", "warp_tile_k")))
        a, b, c = v("vec_a"), v("vec_b"), v("vec_c")
        wg, gm, spec, sk = v("num_wave_groups"), v("num_groups_to_merge"), v("specialization"), v("streamk")
        pm, pn, pk = v("pad_m"), v("pad_n"), v("pad_k")
        tail = [
            f"('' if ({a}, {b}, {c}) == DV else f'_vec{{{a}}}_{{{b}}}_{{{c}}}')",
            f"('' if {wg} == 1 else f'_wg{{{wg}}}')",
            f"('' if {gm} == 1 else f'_gm{{{gm}}}')",
            f"('_dsb' if {v('double_smem_buffer')} else '')",
            f"('_2stage' if {v('two_stage')} else '')",
            f"('' if {spec} == 'default' else '_' + {spec})",
            f"('_explicit_gemm' if {v('explicit_gemm')} else '')",
            f"('' if {sk} == 'none' else '_streamk_' + {sk} + ('_persistent' if {v('streamk_persistent')} else ''))",
            f"('_large_tensor' if {v('split_image')} else '')",
            f"('' if ({pm} and {pn} and {pk}) else f'_pad{{int(bool({pm}))}}{{int(bool({pn}))}}{{int(bool({pk}))}}')",
        ]
        source = "lambda r: " + " + ".join([head, *tail])
    return _Formatter(kind, index, ints, texts, flags, source)


def _domains_ok(fmt: _Formatter, domains: Mapping[str, Any]) -> bool:
    """Whether the domains of the formatter's integer and flag fields hold only values their checks accept."""
    ints, flags = (_DW_INTS, ()) if fmt.kind == "dw" else (_GEMM_INTS, _FLAGS)
    if not all(k in domains for k in (*ints, *flags)):
        return False
    int_values = [v for k in ints for v in domains[k].values]
    flag_values = [v for k in flags for v in domains[k].values]
    return (bool(int_values) and set(map(type, int_values)) == _INT_TYPE and min(int_values) >= 0
            and max(int_values) < _INT_BOUND and set(map(type, flag_values)) <= _FLAG_TYPES)


def _rows_ok(fmt: _Formatter, keys: Sequence[str], rows: Sequence[tuple],
             domains: Mapping[str, Any] | None = None) -> bool:
    """Whether every row passes the checks format_name would make (see name_rows), its family is the
    formatter's, and each text combination was accepted by format_name (checked now, once, when new)."""
    try:
        kinds = {_row_kind(keys, rows[0])}
        for column in ("variant", "kind"):
            if column in fmt.index:
                values = set(map(operator.itemgetter(fmt.index[column]), rows))
                kinds |= {_row_kind((column,), (value,)) for value in values}
        if kinds != {fmt.kind}:
            return False
        if not (domains is not None and _domains_ok(fmt, domains)):
            ints = list(itertools.chain.from_iterable(map(fmt.ints, rows)))
            if set(map(type, ints)) != _INT_TYPE or min(ints) < 0 or max(ints) >= _INT_BOUND:
                return False
            if fmt.flags is not None and not set(map(type, itertools.chain.from_iterable(map(fmt.flags, rows)))) \
                    <= _FLAG_TYPES:
                return False
        firsts = dict(zip(map(fmt.texts, reversed(rows)), reversed(rows)))  # combination -> its first row
    except TypeError:  # an unhashable value, or one without an order
        return False
    for combo, row in firsts.items():
        texts = (fmt.kind, *combo)
        if texts in _CHECKED_TEXT:
            continue
        try:
            format_name(dict(zip(keys, row)))
        except (ValueError, TypeError, KeyError):
            return False
        _CHECKED_TEXT.add(texts)
    return True


