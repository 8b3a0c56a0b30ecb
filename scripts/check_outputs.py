#!/usr/bin/env python3
"""Record or compare the outputs of every command, to show a refactoring changes nothing a user sees.

    python3 scripts/check_outputs.py record FILE     # run the commands, write a digest of each output to FILE
    python3 scripts/check_outputs.py compare FILE    # run them again; exit 1 and name every command that differs

Each command runs as a whole process (`python -m ckspace ...`, the ckspace on PYTHONPATH: run from outside the
checkout with PYTHONPATH=DIR to check a built package) in a fresh cache directory; its exit code, stdout
and stderr (wall times and the temp dir masked) are hashed (emit: every file it writes, by relative path). The list covers enumerate in every format on
gfx942 and gfx950, the counts, tests/tiny, explain (valid, rejected, JSON, batch), coverage, sample, emit and the
error lines of bad input.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
REJECTED = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_96x128x64_2x2x1_32x32x16_vec8_8_8"
VALID = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8"
BATCH = "\n".join([VALID, REJECTED, "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshufle_intrawave_128x128x64_2x2x1_32x32x16_vec8_8_8",
                   "grouped_conv_bwd_data_fp32_nhwgc_2d_mem_cshuffle_intrawave_64x64x32_2x2x1_16x16x8_vec1_1_1"]) + "\n"

EXPLAINED = [  # (arch, name): in ck-tiny, ck-full-tests, ck-profiler, fp32 and depthwise ones, and other archs
    ("gfx950", "grouped_conv_bwd_weight_bf16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_16x16x32_1x1x1_16x16x16_vec1_1_1"
               "_streamk_tree"),
    ("gfx950", "grouped_conv_fwd_bf16_nhwgc_2d_compv1_cshuffle_interwave_128x32x32_2x1x1_32x32x16_vec1_1_8_gm8"),
    ("gfx950", "grouped_conv_bwd_data_bf16_ndhwgc_3d_compv1_cshuffle_intrawave_128x128x32_1x2x1_32x32x8_vec8_8_8"),
    ("gfx950", "grouped_conv_bwd_data_fp32_nhwgc_3d_compv1_cshuffle_intrawave_128x32x32_2x1x1_32x32x8_vec8_1_1"
               "_filter1x1_stride1_pad0"),
    ("gfx950", "grouped_conv_fwd_depthwise_fp32_ngchw_2d_32x32_f3_s2x2_p1x1_nb2_sub4x4_vec8_8"),
    ("gfx1201", "grouped_conv_fwd_depthwise_bf16_ngchw_2d_16x16_f3_s1x1_p1x1_nb1_sub2x2_vec2_2"),
    ("gfx90a", "grouped_conv_bwd_weight_bf16_nhwgc_2d_basic_async_v1_cshuffle_intrawave_128x32x32_4x1x1_16x16x16_vec8_2_2"
               "_filter1x1_stride1_pad0_streamk_tree_persistent"),
]


def commands() -> list[tuple[str, list[str], str | None]]:
    """(label, argv after `ckspace`, stdin) for every command compared."""
    # First, on the empty cache: explain of one name, per dtype and arch (CK's procedures are computed per dtype).
    out: list[tuple[str, list[str], str | None]] = [
        (f"explain one {i}", ["explain", name, "--arch", arch], None) for i, (arch, name) in enumerate(EXPLAINED)]
    out.append(("explain many", ["explain", "-", "--arch", "gfx950"],
                "\n".join(n for a, n in EXPLAINED if a == "gfx950") + "\n"))
    for arch in ("gfx942", "gfx950"):
        for fmt in ("names", "json", "jsonl", "csv", "table"):
            out.append((f"enumerate {arch} {fmt}", ["enumerate", "--arch", arch, "--format", fmt], None))
        for fmt in ("names", "json", "jsonl", "csv", "table"):
            out.append((f"count {arch} {fmt}", ["enumerate", "--arch", arch, "--count", "--format", fmt], None))
        out += [
            (f"archfilter {arch}", ["enumerate", "--arch", arch, "--rules", "+ck-archfilter", "--count"], None),
            (f"where {arch}", ["enumerate", "--arch", arch, "--where", "pipeline == 'compv4' and tile_n >= 128",
                               "--format", "csv"], None),
            (f"tests {arch}", ["enumerate", "--arch", arch, "--set", "tests"], None),
            (f"tiny {arch}", ["enumerate", "--arch", arch, "--set", "tiny", "--format", "jsonl"], None),
            (f"ck-api {arch}", ["enumerate", "--arch", arch, "--ck-api", "2025.11", "--count"], None),
            (f"explain valid {arch}", ["explain", VALID, "--arch", arch], None),
            (f"explain rejected {arch}", ["explain", REJECTED, "--arch", arch], None),
            (f"explain json {arch}", ["explain", REJECTED, "--arch", arch, "--format", "json"], None),
            (f"explain open {arch}", ["explain", REJECTED, "--arch", arch, "--rules", "-ck-curation"], None),
            (f"explain batch {arch}", ["explain", "-", "--arch", arch], BATCH),
            (f"explain batch json {arch}", ["explain", "-", "--arch", arch, "--format", "json"], BATCH),
            (f"coverage tiny {arch}", ["coverage", "--set", "tiny", "--arch", arch], None),
            (f"coverage file {arch}", ["coverage", "-", "--arch", arch, "--format", "json"], BATCH),
            (f"sample {arch}", ["sample", "-n", "30", "--seed", "7", "--stratify", "variant,ndim,dtype",
                                "--arch", arch, "--format", "csv"], None),
            (f"sample table {arch}", ["sample", "-n", "12", "--arch", arch, "--format", "table"], None),
            (f"emit tiny {arch}", ["emit", "--arch", arch, "--set", "tiny", "-o", "{out}"], None),
            (f"emit 2025.11 {arch}", ["emit", "--arch", arch, "--set", "tiny", "--ck-api", "2025.11", "-o", "{out}"], None),
        ]
    for arch, catalog in (("gfx950", "ck-default"), ("gfx942", "ck-default"), ("gfx950", "ck-profiler"),
                          ("gfx942", "ck-tests"), ("gfx950", "ck-full-tests"), ("gfx950", "ck-tiny"),
                          ("gfx1201", "ck-rdna"), ("gfx1100", "ck-rdna"), ("gfx90a", "full"), ("gfx1250", "full")):
        out.append((f"catalog {catalog} {arch}", ["enumerate", "--arch", arch, "--set", catalog], None))
        out.append((f"catalog {catalog} {arch} count", ["enumerate", "--arch", arch, "--set", catalog, "--count"],
                    None))
    out.append(("catalog ck-profiler gfx942 jsonl", ["enumerate", "--arch", "gfx942", "--set", "ck-profiler",
                                                      "--format", "jsonl"], None))
    for run in ("cold", "warm"):  # the same command twice: the second is served by the cache
        out.append((f"gfx950 names {run}", ["enumerate", "--arch", "gfx950"], None))
        out.append((f"gfx950 csv bwd_data {run}", ["enumerate", "--arch", "gfx950", "--variant", "bwd_data",
                                                   "--format", "csv"], None))
        out.append((f"gfx950 count-by {run}", ["enumerate", "--arch", "gfx950", "--count-by", "pipeline,scheduler"],
                    None))
    out += [
        ("open count", ["enumerate", "--arch", "gfx950", "--rules", "-ck-curation", "--count"], None),
        ("gfx90a count", ["enumerate", "--arch", "gfx90a", "--count"], None),
        ("gfx1201 count", ["enumerate", "--arch", "gfx1201", "--count"], None),
        ("bad arch", ["enumerate", "--arch", "gfx999"], None),

        ("bad where", ["enumerate", "--arch", "gfx950", "--where", "tile_q > 1"], None),
        ("bad name", ["explain", "grouped_conv_fwd_fp16_nhwgc_2d_compv3_cshuffle_intrawave_128x12x_2x2x1_32x32x16_vec8_8_8"], None),
    ]
    return out


# Wall times in messages ("2.5s", "0.31 s") change from run to run; they are not part of what is compared.
SECONDS = re.compile(rb"\d+(?:\.\d+)? ?s\b")


INSTALLED_OBJECTIVES = re.compile(rb"/[^\s\"']*/ckspace/objectives")


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def normal(data: bytes, out_dir: Path) -> bytes:
    """Output without what differs between two runs of the same command: the temp dir, the checkout's path (two
    checkouts are compared; the objectives' folder also as a built package installs it) and wall times."""
    data = data.replace(str(out_dir).encode(), b"{out}").replace(str(REPO / "objectives").encode(), b"{objectives}")
    data = INSTALLED_OBJECTIVES.sub(b"{objectives}", data)  # an installed package's copy (PYTHONPATH=its dir)
    data = data.replace(str(REPO).encode(), b"{repo}")
    return SECONDS.sub(b"<t>", data)


def run_all() -> dict[str, dict[str, object]]:
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "CKSPACE_CACHE_DIR": str(Path(tmp) / "cache"), "COLUMNS": "160"}
        for i, (label, argv, stdin) in enumerate(commands()):
            out_dir = Path(tmp) / f"emit{i}"
            argv = [a.replace("{out}", str(out_dir)) for a in argv]
            proc = subprocess.run([sys.executable, "-m", "ckspace", *argv], input=(stdin or "").encode(), env=env,
                                  capture_output=True)
            entry: dict[str, object] = {"rc": proc.returncode, "stdout": digest(normal(proc.stdout, out_dir)),
                                        "stderr": digest(normal(proc.stderr, out_dir))}
            if out_dir.exists():
                files = sorted(p for p in out_dir.rglob("*") if p.is_file())
                entry["files"] = {str(p.relative_to(out_dir)): digest(p.read_bytes()) for p in files}
            results[label] = entry
            print(f"{label}: rc {proc.returncode}", file=sys.stderr)
    return results


def main() -> int:
    if len(sys.argv) != 3 or sys.argv[1] not in ("record", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(sys.argv[2])
    now = run_all()
    if sys.argv[1] == "record":
        path.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"recorded {len(now)} commands in {path}")
        return 0
    before = json.loads(path.read_text())
    differ = [label for label in before if before[label] != now.get(label)]
    for label in differ:
        b, a = before[label], now.get(label, {})
        keys = [k for k in sorted(set(b) | set(a)) if b.get(k) != a.get(k)]
        print(f"DIFFERS: {label}: {', '.join(keys)}")
    print(f"{len(before) - len(differ)} of {len(before)} commands give byte-identical output")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
