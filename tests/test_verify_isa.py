"""`ckspace verify` reads the ISA: each unit is compiled to AMDGPU assembly and assembled into its object
(ckspace/codegen/rusage.py --isa), and each kernel's report gives its LDS bytes, registers, scratch and matrix
instructions; a kernel whose code holds no matrix instruction is a failure of its own (`no-matrix`).

The parser tests read two excerpts of real `clang -S` output (tests/fixtures/isa, trimmed: most instructions and
kernel arguments left out, every matrix instruction, call and directive kept): a gfx942 kernel with MFMA, and a gfx1201
fp16 16x16x32 kernel that CK Tile compiles without any WMMA. The verify tests run the stand-in compiler of
test_verify.py (it writes such an assembly and an ELF object with its kernel descriptors), and two real compiles
with the registry toolchain: the same two kernels.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ckspace import Space
from ckspace.cli import main
from ckspace.codegen import build as B
from ckspace.codegen import isa
from ckspace.codegen import rusage
from ckspace.codegen import verify as V
from ckspace.rules.names import parse_name

from test_build import _elf_header, _toolchain
from test_verify import NO_MATRIX_ENV, _fake_compiler, _kernels, _names_file, fake_object

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "isa"
GFX942_ASM = FIXTURES / "gfx942-fwd-bf16-16x16x16.s"
GFX1201_ASM = FIXTURES / "gfx1201-fwd-fp16-16x16x32.s"
# the kernels of the two excerpts: both compile with CK API 2025.11 in about 10-25 s
GFX942 = "grouped_conv_fwd_bf16_nhwgc_2d_compv1_cshuffle_intrawave_64x16x16_1x1x1_16x16x16_vec4_1_1_gm32_filter1x1_pad0"
GFX1201 = "grouped_conv_fwd_fp16_nhwgc_2d_compv1_cshuffle_intrawave_64x32x32_4x2x1_16x16x32_vec8_8_8"
FLUSH_CACHE = "_ZN7ck_tileL11flush_cacheEv"  # a kernel of CK Tile's headers in every unit, no conv kernel's
OCKL = ["__ockl_get_group_id", "__ockl_get_local_id", "__ockl_mul_hi_u32"]  # HIP 5.2's headers, left as calls


def _descriptors_of(text: str) -> dict[str, tuple[int, int]]:
    """Each `.amdhsa_kernel` block's group and private segment sizes, read here independently of ckspace."""
    out = {}
    for m in re.finditer(r"\.amdhsa_kernel (\S+)\n(.*?)\.end_amdhsa_kernel", text, re.S):
        group = re.search(r"\.amdhsa_group_segment_fixed_size (\d+)", m.group(2))
        private = re.search(r"\.amdhsa_private_segment_fixed_size (\d+)", m.group(2))
        out[m.group(1)] = (int(group.group(1)), int(private.group(1)))
    return out


def _lds_of_name(name: str) -> int:
    """(tile_m + tile_n) * tile_k * element bytes (* 2 with a double LDS buffer): the A and B tiles, from the name."""
    cfg = parse_name(name)
    return (cfg["tile_m"] + cfg["tile_n"]) * cfg["tile_k"] * (4 if cfg["dtype"] == "fp32" else 2) * (
        2 if cfg["double_smem_buffer"] else 1)


def _fields(tmp_path: Path, arch: str, names: list[str]) -> dict[str, dict]:
    """The manifest's fields of kernels, as emit writes them (what the entry points are matched against)."""
    from ckspace.codegen.emit import emit

    space = Space(arch=arch, rules="+ck-api-2025.11")
    configs = []
    for name in names:
        cfg = space.parse(name)
        cfg["name"] = name
        configs.append(cfg)
    emit(space, configs, tmp_path / "e", revision="2025.11")
    kernels = json.loads((tmp_path / "e" / "manifest.json").read_text())["kernels"]
    return {n: kernels[n]["fields"] for n in names}


# ---- the assembly ----------------------------------------------------------------------------------------------
def test_the_assembly_of_a_gfx942_kernel_gives_its_resources_and_its_mfma():
    text = GFX942_ASM.read_text()
    entries = isa.parse_assembly(text)
    (kentry,) = [s for s in entries if s.startswith("_ZN7ck_tile6kentry")]
    assert set(entries) == {kentry, FLUSH_CACHE}
    e = entries[kentry]
    assert (e.lds_bytes, e.scratch_bytes) == _descriptors_of(text)[kentry] == (2560, 0)
    assert e.matrix == {"v_mfma_f32_16x16x16_bf16": 8} and text.count("\tv_mfma_f32_16x16x16_bf16 ") == 8
    # the metadata's resolved counts (the descriptor's are expressions of the .set symbols in clang 22)
    assert (e.vgprs, e.agprs, e.sgprs, e.vgpr_spills, e.sgpr_spills, e.wavefront_size) == (192, 64, 106, 0, 143, 64)
    assert ".amdhsa_next_free_vgpr max(totalnumvgprs(" in text
    assert e.calls == OCKL  # -nogpulib: the ockl functions stay calls (hence the SGPR spills)
    flush = entries[FLUSH_CACHE]
    assert flush.matrix == {} and flush.lds_bytes == 0 and flush.calls == []


def test_the_assembly_of_a_gfx1201_16x16x32_fp16_kernel_has_no_matrix_instruction():
    text = GFX1201_ASM.read_text()
    assert not any(m in text for m in isa.MATRIX_PREFIXES)
    entries = isa.parse_assembly(text)
    (kentry,) = [s for s in entries if s.startswith("_ZN7ck_tile6kentry")]
    e = entries[kentry]
    assert e.matrix == {} and e.wavefront_size == 32 and e.agprs is None  # RDNA: wave32, no AGPRs
    assert (e.lds_bytes, e.scratch_bytes) == _descriptors_of(text)[kentry] == (6144, 0)
    assert (e.vgprs, e.sgprs) == (89, 107)
    assert isa.summarize([e])["matrix_instructions"] == 0


HAND_MADE = """\t.text
\t.type\t_Z6helperv,@function
_Z6helperv:                             ; -- Begin function _Z6helperv
\tv_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]
\tv_swmmac_f32_16x16x32_f16 v[0:7], v[8:11], v[12:19], v20
\ts_setpc_b64 s[30:31]
.Lfunc_end0:
                                        ; -- End function
\t.type\t"_Z4kernv",@function
"_Z4kernv":
\ts_getpc_b64 s[0:1]
\ts_add_u32 s0, s0, _Z6helperv@rel32@lo+4   ; a call to the function above
\ts_add_u32 s2, s2, __ockl_get_local_id@rel32@lo+4
\ts_swappc_b64 s[30:31], s[0:1]
\tv_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]
\t; v_mfma_f32_32x32x8_f16 in a comment is no instruction
\ts_endpgm
\t.section\t.rodata,"a",@progbits
\t.amdhsa_kernel _Z4kernv
\t\t.amdhsa_group_segment_fixed_size 512
\t\t.amdhsa_private_segment_fixed_size 16
\t\t.amdhsa_next_free_vgpr max(totalnumvgprs(_Z4kernv.num_agpr, _Z4kernv.num_vgpr), 1, 0)
\t.end_amdhsa_kernel
\t.text
                                        ; -- End function
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .args:
      - .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 512
    .name:           '_Z4kernv'
    .sgpr_count:     30
    .uses_dynamic_stack: true
    .vgpr_count:     24
amdhsa.target:   amdgcn-amd-amdhsa--gfx1100
amdhsa.version:
  - 1
  - 2
...
\t.end_amdgpu_metadata
"""


def test_a_kernel_counts_the_matrix_instructions_of_the_functions_it_calls():
    entries = isa.parse_assembly(HAND_MADE)
    assert list(entries) == ["_Z4kernv"]  # the helper is a function, no kernel
    e = entries["_Z4kernv"]
    assert e.matrix == {"v_swmmac_f32_16x16x32_f16": 1, "v_wmma_f32_16x16x16_f16": 2}
    assert e.calls == ["__ockl_get_local_id"]
    assert (e.lds_bytes, e.scratch_bytes, e.vgprs, e.sgprs, e.agprs) == (512, 16, 24, 30, None)


def test_the_metadata_keeps_each_kernels_scalars():
    lines = HAND_MADE.split("\t.amdgpu_metadata\n")[1].splitlines()
    (kernel,) = isa.parse_metadata(lines)
    assert kernel == {"group_segment_fixed_size": 512, "name": "_Z4kernv", "sgpr_count": 30,
                      "uses_dynamic_stack": True, "vgpr_count": 24}


def test_the_object_descriptors_are_read_from_the_elf_symbols(tmp_path):
    obj = tmp_path / "u.o"
    obj.write_bytes(fake_object(GFX942_ASM.read_text()))
    assert isa.read_descriptors(obj) == _descriptors_of(GFX942_ASM.read_text())
    obj.write_bytes(b"object")
    with pytest.raises(Exception, match="not a 64-bit little-endian ELF"):
        isa.read_descriptors(obj)


def test_a_unit_is_read_per_kernel_by_its_entry_points(tmp_path):
    other = "grouped_conv_fwd_bf16_nhwgc_2d_compv1_cshuffle_intrawave_128x64x8_2x1x1_32x32x8_vec1_1_8"
    fields = _fields(tmp_path, "gfx942", [GFX942, other])
    text = GFX942_ASM.read_text()
    obj = tmp_path / "u.o"
    obj.write_bytes(fake_object(text))
    (kentry,) = [s for s in isa.parse_assembly(text) if s.startswith("_ZN7ck_tile6kentry")]
    # the entry point is the kernel's by its demangled template arguments, as the build's object check matches them
    assert B.kernel_entry_points(fields, [kentry, FLUSH_CACHE]) == {GFX942: [kentry], other: []}
    read = isa.read_unit(GFX942_ASM, obj, fields)
    summary, why = read[GFX942]
    assert why == "" and summary["entry_points"] == 1
    assert (summary["lds_bytes"], summary["vgprs"], summary["agprs"], summary["sgprs"], summary["scratch_bytes"]) == (
        2560, 192, 64, 106, 0)
    assert summary["matrix_instructions"] == 8 and summary["matrix_mnemonics"] == {"v_mfma_f32_16x16x16_bf16": 8}
    assert summary["external_calls"] == OCKL
    assert read[other] == (None, "no entry point of it in the unit's assembly")
    # an object that is not this assembly's (its descriptor says other LDS) is no ISA
    obj.write_bytes(fake_object(text.replace("group_segment_fixed_size 2560", "group_segment_fixed_size 2048")))
    summary, why = isa.read_unit(GFX942_ASM, obj, {GFX942: fields[GFX942]})[GFX942]
    assert summary is None and "is not the assembly's" in why and "LDS 2048" in why
    summary, why = isa.read_unit(tmp_path / "missing.s", obj, {GFX942: fields[GFX942]})[GFX942]
    assert summary is None and why.startswith("no assembly of the unit")


def test_the_compile_is_split_into_assembly_and_assembling():
    cmd = ["/tc/bin/hipclang-zig", "-std=c++20", "-O3", "--offload-arch=gfx942", "--cuda-device-only", "-I/ck",
           "-MD", "-MF", "obj/gfx942/u.o.d", "-MT", "obj/gfx942/u.o", "-c", "units/u.cpp", "-o", "obj/gfx942/u.o.tmp"]
    to_asm, assemble, asm = rusage.isa_commands(cmd)
    assert asm == "obj/gfx942/u.s"
    assert to_asm == [*cmd[:11], "-S", "units/u.cpp", "-o", "obj/gfx942/u.s.tmp"]
    assert assemble == ["/tc/bin/hipclang-zig", "-std=c++20", "-O3", "--offload-arch=gfx942", "--cuda-device-only",
                        "-I/ck", "-Wno-unused-command-line-argument", "-x", "assembler", "--target=amdgcn-amd-amdhsa",
                        "-mcpu=gfx942", "-c", "obj/gfx942/u.s.tmp", "-o", "obj/gfx942/u.o.tmp"]
    assert rusage.isa_commands(["cc", "-E", "u.cpp", "-o", "u.i"]) is None  # not a compile to an object
    assert rusage.isa_commands(["cc", "-c", "u.cpp", "-o", "u.o"]) is None  # no --offload-arch: no target to assemble


# ---- verify with the stand-in compiler -------------------------------------------------------------------------
def test_a_kernel_without_matrix_instruction_is_no_matrix_and_the_lds_is_compared(tmp_path, capsys, monkeypatch):
    space, configs = _kernels("gfx950", 2)
    good, bad = sorted(str(c["name"]) for c in configs)
    monkeypatch.setenv(NO_MATRIX_ENV, bad)
    args = ["verify", "--arch", "gfx950", "--names", _names_file(tmp_path, [good, bad]), "--ck-api", "2025.11",
            *_fake_compiler(tmp_path), "-j", "1", "-o", str(tmp_path / "v")]
    assert main([*args, "--format", "json"]) == 1
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["counts"] == {"ok": 1, "failed": 0, "no-matrix": 1, "no-launch": 0, "timed-out": 0, "not-run": 0, "unexpressible": 0}
    assert out["warnings"] == [] and "warning" not in captured.err
    kernels = {k["name"]: k for k in out["kernels"]}
    assert kernels[bad]["status"] == "no-matrix" and kernels[bad]["error"].startswith("no-matrix: no matrix")
    assert kernels[bad]["isa"]["matrix_instructions"] == 0 and kernels[bad]["isa"]["matrix_mnemonics"] == {}
    isa_ok = kernels[good]["isa"]  # what the stand-in's assembly says
    assert (isa_ok["lds_bytes"], isa_ok["vgprs"], isa_ok["agprs"], isa_ok["sgprs"], isa_ok["scratch_bytes"]) == (
        1024, 48, 16, 20, 0)
    assert isa_ok["matrix_instructions"] == 1 and isa_ok["matrix_mnemonics"] == {"v_mfma_f32_32x32x8_f16": 1}
    for name in (good, bad):
        assert kernels[name]["lds_model"] == _lds_of_name(name)
        assert kernels[name]["lds_delta"] == 1024 - _lds_of_name(name)
    deltas = {n: 1024 - _lds_of_name(n) for n in (good, bad)}
    assert out["lds"]["compared"] == 2 and out["lds"]["agree"] == sum(1 for d in deltas.values() if d == 0)
    if max(deltas.values()) > 0:
        assert out["lds"]["max_under"]["bytes"] == max(deltas.values())
    if min(deltas.values()) < 0:
        assert out["lds"]["max_over"]["bytes"] == -min(deltas.values())
    assert [p["kernels"] for p in out["proposals"]] == [[bad]]  # a failure class of its own
    # the assembly of the last round stays next to its object; one compile log line per unit (both steps)
    assert (tmp_path / "v" / "work" / "obj" / "gfx950" / "grouped_conv_instances_0000.s").is_file()
    assert (tmp_path / "v" / "compiles.log").read_text().count("\n") == 2
    # the text report (the verdicts and ISA kept from the first run)
    assert main(args) == 1
    text = capsys.readouterr().out
    assert "1 ok, 0 failed, 0 not run, 1 without a matrix instruction (no-matrix) (2 from earlier runs)" in text
    assert f"  NO-MATRIX {bad}: LDS 1,024 B (model {_lds_of_name(bad):,}" in text
    assert f"  ok {good}: LDS 1,024 B" in text and "1 matrix (v_mfma_f32_32x32x8_f16 ×1); 1 entry point(s)" in text
    assert "LDS: the model's lds_bytes is the descriptor's group segment size for" in text
    # verdicts of an older ckspace (no ISA) are not taken: those kernels are compiled again
    results = tmp_path / "v" / "verify-results.json"
    data = json.loads(results.read_text())
    for entry in data["kernels"].values():
        entry.pop("isa"), entry.pop("isa_error")
        entry["status"], entry["error"] = "ok", ""
    results.write_text(json.dumps(data))
    for s in (tmp_path / "v" / "work" / "obj" / "gfx950").glob("*.s"):
        s.unlink()  # as an older build left it: objects without assembly, which ninja would not compile again
    assert main([*args, "--format", "json"]) == 1
    again = json.loads(capsys.readouterr().out)
    assert again["compiles"] == 2 and again["counts"]["no-matrix"] == 1 and again["warnings"] == []


# ---- real compiles ---------------------------------------------------------------------------------------------
@pytest.mark.compile
@pytest.mark.parametrize("arch,name,asm_text", [("gfx942", GFX942, "v_mfma"), ("gfx1201", GFX1201, None)])
def test_verify_reads_the_isa_of_a_real_compile(tmp_path, monkeypatch, capsys, arch, name, asm_text):
    _toolchain(monkeypatch)
    out_dir = tmp_path / "v"
    args = ["verify", "--arch", arch, "--names", _names_file(tmp_path, [name]), "--ck-api", "2025.11",
            "--toolchain", "none", "-j", "1", "-o", str(out_dir), "--format", "json"]
    code = main(args)
    out = json.loads(capsys.readouterr().out)
    (kernel,) = out["kernels"]
    work = out_dir / "work"
    asm = (work / "obj" / arch / "grouped_conv_instances_0000.s").read_text()
    obj = work / "obj" / arch / "grouped_conv_instances_0000.o"
    # the object is an AMDGPU object of the arch with an entry point for the kernel: the build's object check
    assert _elf_header(obj) == (B.EM_AMDGPU, _elf_header(obj)[1]) and _elf_header(obj)[1] & 0xFF == B.MACH[arch]
    assert all(c.ok for c in B.check_objects(work, [arch])), [c.problems for c in B.check_objects(work, [arch])]
    # the LDS, against the descriptors read here from the assembly, and the model's formula
    kernels = {k: v for k, v in _descriptors_of(asm).items() if k.startswith("_ZN7ck_tile6kentry")}
    assert kernels and kernel["isa"]["entry_points"] == len(kernels)
    assert kernel["isa"]["lds_bytes"] == max(g for g, _ in kernels.values())
    assert kernel["isa"]["scratch_bytes"] == max(p for _, p in kernels.values())
    assert kernel["lds_model"] == _lds_of_name(name)
    assert kernel["lds_delta"] == kernel["isa"]["lds_bytes"] - _lds_of_name(name)
    assert out["lds"]["compared"] == 1 and out["lds"]["agree"] == (kernel["lds_delta"] == 0)
    assert kernel["isa"]["vgprs"] > 0 and kernel["isa"]["sgprs"] > 0
    if asm_text:  # gfx942: MFMA, AGPRs, wave64
        assert code == 0 and kernel["status"] == "ok" and kernel["error"] is None
        n = len(re.findall(r"^\s+v_mfma\w*", asm, re.M))
        assert n > 0 and kernel["isa"]["matrix_instructions"] == n
        assert all(m.startswith("v_mfma") for m in kernel["isa"]["matrix_mnemonics"])
        assert kernel["isa"]["agprs"] is not None and kernel["isa"]["wavefront_size"] == 64
    else:  # gfx1201 16x16x32 fp16: it compiles, with no WMMA at all
        assert code == 1 and kernel["status"] == "no-matrix" and kernel["error"].startswith("no-matrix")
        assert not any(m in asm for m in isa.MATRIX_PREFIXES)
        assert kernel["isa"]["matrix_instructions"] == 0 and kernel["isa"]["agprs"] is None
        assert kernel["isa"]["wavefront_size"] == 32
        assert out["counts"]["no-matrix"] == 1


# ---- launch bounds -------------------------------------------------------------------------------------------
def test_the_metadata_gives_each_entry_points_launch_limit():
    entries = isa.parse_assembly(GFX942_ASM.read_text())
    (kentry,) = [s for s in entries if s.startswith("_ZN7ck_tile6kentry")]
    # the conv kernel's __launch_bounds__ is its block: 1x1x1 waves of 64 lanes (the name); flush_cache has none,
    # and LLVM's default bound is 1024
    assert entries[kentry].max_flat_workgroup_size == 64 and entries[FLUSH_CACHE].max_flat_workgroup_size == 1024
    assert isa.summarize([entries[kentry], entries[FLUSH_CACHE]])["max_flat_workgroup_size"] == 64


@pytest.mark.compile
def test_a_block_of_2048_threads_compiles_but_no_launch_can_run_it(tmp_path, monkeypatch, capsys):
    # 4x4x2 waves of 64 lanes: __launch_bounds__(2048), which LLVM drops for its cap of 1024 (arch.workgroup-size)
    _toolchain(monkeypatch)
    name = "grouped_conv_fwd_fp16_nhwgc_2d_compv3_default_intrawave_64x64x64_4x4x2_16x16x16_vec8_8_2"
    args = ["verify", "--arch", "gfx942", "--names", _names_file(tmp_path, [name]), "--ck-api", "2025.11",
            "--toolchain", "none", "--rules", "-ck-curation", "-j", "1", "-o", str(tmp_path / "v"), "--format", "json"]
    assert main(args) == 1
    out = json.loads(capsys.readouterr().out)
    (kernel,) = out["kernels"]
    asm = (tmp_path / "v" / "work" / "obj" / "gfx942" / "grouped_conv_instances_0000.s").read_text()
    assert set(re.findall(r"\.max_flat_workgroup_size:\s+(\d+)", asm)) == {"1024"}
    assert kernel["status"] == "no-launch" and "2048 threads" in kernel["error"] and "1024" in kernel["error"]
    assert kernel["isa"]["matrix_instructions"] > 0 and out["counts"]["no-launch"] == 1
