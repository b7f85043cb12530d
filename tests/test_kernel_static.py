"""bench/kernel_static.py: its readers of ptxas's and cuobjdump's output (samples captured from
nvcc 13.0 for sm_90), and real builds of every kernel file where nvcc is installed (CI has none:
skipped there)."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from cuzk_backend_gpu.kernels import kernel_files, kernel_root

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import kernel_static

REPO = Path(__file__).resolve().parents[1]

PTXAS = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'wide' for 'sm_90'
ptxas info    : Function properties for wide
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
ptxas info    : Compile time = 3.228 ms
ptxas info    : Compiling entry function 'msm_sum_batch_affine_g2' for 'sm_90'
ptxas info    : Function properties for msm_sum_batch_affine_g2
    64 bytes stack frame, 60 bytes spill stores, 72 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 64 bytes cumulative stack size
"""

SASS = """\
\t\tFunction : wide
\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;           /* 0x00000a00ff017b82 */
                                                                    /* 0x000fe20000000800 */
        /*0050*/                   IMAD.WIDE.U32 R2, R5, 0x8, R2 ;  /* 0x0000000805027825 */
                                                                    /* 0x001fca00078e0002 */
        /*0060*/                   LDG.E.64 R4, desc[UR4][R2.64] ;  /* 0x0000000402047981 */
                                                                    /* 0x000ea4000c1e1b00 */
        /*0070*/                   IMAD R7, R5, UR6, RZ ;           /* 0x0000000605077c24 */
                                                                    /* 0x004fe4000f8e02ff */
        /*0080*/               @P0 IMAD.WIDE.U32.X R4, R4, UR6, RZ, P1 ;  /* 0x0000000604047c25 */
                                                                    /* 0x000fca000f8e00ff */
        /*00a0*/                   STG.E.64 desc[UR4][R2.64], R4 ;  /* 0x0000000402007986 */
                                                                    /* 0x000fe2000c101b04 */
        /*00b0*/                   EXIT ;                           /* 0x000000000000794d */
                                                                    /* 0x000fea0003800000 */
        /*00d0*/                   NOP;                             /* 0x0000000000007918 */
                                                                    /* 0x000fc00000000000 */
\t\t..........


\t\tFunction : twice
\t.headerflags\t@"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   STL [R1], R4 ;                   /* 0x00000a00ff017b82 */
                                                                    /* 0x000fe20000000800 */
        /*0010*/                   MOV R2, R3 ;                     /* 0x0000000000057919 */
                                                                    /* 0x000e2e0000002100 */
"""


def test_ptxas_registers_and_spills_per_entry() -> None:
    assert kernel_static.parse_ptxas(PTXAS) == {
        "wide": {"registers": 10, "spill_stores": 0, "spill_loads": 0},
        "msm_sum_batch_affine_g2": {"registers": 255, "spill_stores": 60, "spill_loads": 72},
    }


def test_sass_counts_per_kernel_without_padding() -> None:
    counts = kernel_static.parse_sass(SASS)
    wide = counts["wide"]
    assert wide["instructions"] == 7  # the NOP is padding
    assert wide["wide_multiplies"] == 2  # a predicated one too
    assert wide["multiplies"] == 1
    assert (wide["global_loads"], wide["global_stores"], wide["local_stores"]) == (1, 1, 0)
    assert counts["twice"].pop("sass_digest") != wide["sass_digest"]
    assert counts["twice"] == {
        **dict.fromkeys(kernel_static.CLASSES, 0),
        "instructions": 2,
        "local_stores": 1,
        "moves": 1,
    }


def test_equal_sass_has_equal_digests_wherever_it_sits() -> None:
    # The same instructions at other addresses and under another name (a renamed callee, a
    # kernel of another checkout) digest alike; one operand changed does not.
    moved = SASS.replace("Function : wide", "Function : renamed").replace("/*00", "/*10")
    changed = SASS.replace("IMAD R7, R5, UR6, RZ", "IMAD R7, R5, UR7, RZ")
    digest = kernel_static.parse_sass(SASS)["wide"]["sass_digest"]
    assert kernel_static.parse_sass(moved)["renamed"]["sass_digest"] == digest
    assert kernel_static.parse_sass(changed)["wide"]["sass_digest"] != digest


def test_the_table_marks_the_kernels_whose_sass_is_the_first_columns() -> None:
    def kernel(digest: str) -> dict:
        return {"registers": 64, "spill_stores": 0, "instructions": 9, "wide_multiplies": 2,
                "sass_digest": digest}  # fmt: skip

    results = [{"a": kernel("1"), "b": kernel("2")}, {"a": kernel("1"), "b": kernel("3")}]
    lines = kernel_static.table(["main", "branch"], results, "").splitlines()
    assert lines[1].endswith("64/0 9i 2w =") and lines[1].startswith("a ")
    assert lines[2].endswith("64/0 9i 2w") and lines[2].startswith("b ")


def test_a_tree_that_is_not_a_checkout_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"--tree .*: no backends/kernels/common.cuh there"):
        kernel_static.kernels_of(tmp_path)
    assert kernel_static.kernels_of(REPO) == REPO / "backends" / "kernels"


LOOP_SASS = """\
\t\tFunction : looped
        /*0000*/                   MOV R0, RZ ;
        /*0010*/                   IMAD.WIDE.U32 R2, R5, R6, R2 ;
        /*0020*/                   IMAD.HI.U32 R7, R5, R6, RZ ;
        /*0030*/                   IMAD.MOV.U32 R8, RZ, RZ, R7 ;
        /*0040*/                   STL [R1], R8 ;
        /*0050*/               @P0 BRA 0x10 ;
        /*0060*/                   BRA 0x80 ;
        /*0070*/                   IADD3 R0, R0, 0x1, RZ ;
        /*0080*/                   EXIT ;
        /*0090*/                   BRA 0x90;
        /*00a0*/                   NOP;
"""


def test_sass_loops_count_the_body_of_each_backward_branch() -> None:
    (loop,) = kernel_static.parse_loops(LOOP_SASS)["looped"]  # not the forward branch, nor
    # the branch to itself after EXIT
    assert (loop["start"], loop["end"], loop["instructions"]) == ("0x10", "0x50", 5)
    assert (loop["wide_multiplies"], loop["high_multiplies"], loop["other_multiplies"]) == (1, 1, 1)
    assert loop["local_accesses"] == 1
    assert loop["pipe_units"] == 4 + 4 + 2
    assert loop["model"] == 10 + 5 * kernel_static.MODEL_ISSUE_SHARE


@pytest.mark.parametrize("text", ["K", "1=2", "K=x"])
def test_a_bad_define_is_one_line(text: str) -> None:
    with pytest.raises(SystemExit, match=r"expected NAME=INTEGER|not an integer"):
        kernel_static.parse_defines(text)


def test_defines_parse() -> None:
    assert kernel_static.parse_defines("") == {}
    assert kernel_static.parse_defines("A=1 B=0x10") == {"A": 1, "B": 16}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc (the CUDA toolkit) here")
def test_a_real_build_reads_every_kernel(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "scan.json"
    assert kernel_static.main(["--file", "util/scan.cu", "--out", str(out)]) == 0
    kernels = json.loads(out.read_text())["variants"][0]["kernels"]
    assert {"scan_add_u32", "max_u32"} <= kernels.keys()
    assert all(k["registers"] > 0 and k["spill_stores"] == 0 for k in kernels.values())
    assert "scan_add_u32" in capsys.readouterr().out


@pytest.mark.skipif(
    shutil.which("nvcc") is None or shutil.which("cuobjdump") is None,
    reason="no nvcc and cuobjdump (the CUDA toolkit) here",
)
def test_a_real_builds_loops_are_read(capsys: pytest.CaptureFixture) -> None:
    assert kernel_static.main(["--file", "ntt/ntt.cu", "--loops", "--match", "ntt_stages"]) == 0
    loops = [line for line in capsys.readouterr().out.splitlines() if "ntt_stages 0x" in line]
    assert loops and all(" pipe " in line for line in loops)


@pytest.mark.skipif(
    shutil.which("nvcc") is None or shutil.which("cuobjdump") is None,
    reason="no nvcc and cuobjdump (the CUDA toolkit) here",
)
def test_a_checkout_against_itself_is_the_same_sass(capsys: pytest.CaptureFixture) -> None:
    tree = str(REPO)
    assert (
        kernel_static.main(["--file", "util/scan.cu", "--sass", "--tree", tree, "--tree", tree])
        == 0
    )
    rows = capsys.readouterr().out.splitlines()[1:]
    assert rows and all(row.endswith(" =") for row in rows)


KERNEL_FILES = kernel_files()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc (the CUDA toolkit) here")
@pytest.mark.parametrize("name", KERNEL_FILES)
def test_every_kernel_file_builds_with_nvcc(name: str) -> None:
    # nvcc rejects code that the g++ harnesses accept (round 26: a member struct holding its
    # enclosing template class), so every file is built as the GPU backends assemble it.
    kernels = kernel_static.build(name, {}, "sm_90", None)
    assert kernels and all(k["registers"] > 0 for k in kernels.values())


def test_every_fixed_width_type_a_kernel_names_is_declared_for_nvrtc() -> None:
    # NVRTC (CuPy) has no standard headers: common.cuh declares the fixed-width types itself
    # there, and a type only <cstdint> declares fails every CuPy kernel build (round 33:
    # uint16_t in r1cs/spmv.cu), which nvcc, g++ and the tests above all accept.
    root = kernel_root()
    common = (root / "common.cuh").read_text()
    rtc_branch = common.split("#if defined(__CUDACC_RTC__)", 1)[1].split("#else", 1)[0]
    declared = set(re.findall(r"typedef [\w ]+? (\w+);", rtc_branch))
    fixed_width = re.compile(r"\b(u?int\d+_t|size_t|ptrdiff_t|u?intptr_t)\b")
    used = {
        (path.relative_to(root).as_posix(), name)
        for path in sorted([*root.rglob("*.cu"), *root.rglob("*.cuh")])
        for name in fixed_width.findall(path.read_text())
    }
    assert {"uint8_t", "uint32_t", "uint64_t"} <= declared
    assert sorted((file, name) for file, name in used if name not in declared) == []


@pytest.mark.parametrize(
    ("source", "macro", "host_value"),
    [
        ("r1cs/spmv.cu", "SPMV_LANES", "cuzk_backend_gpu.field:SPMV_LANES"),
        ("r1cs/witness.cuh", "WITNESS_THREADS", "cuzk_backend_gpu.witness:THREADS"),
        ("r1cs/witness.cuh", "WITNESS_SCALED_ROWS", "cuzk_backend_gpu.witness:SCALED_ROWS"),
        ("r1cs/witness.cuh", "WITNESS_OP_LANES", "cuzk_backend_gpu.witness:OP_LANES"),
    ],
)
def test_the_hosts_copy_of_a_kernel_default_is_the_sources(
    source: str, macro: str, host_value: str
) -> None:
    # The host launches by these (threads a row, a block's threads, rows read scaled), so a
    # default changed on one side only would launch the kernel wrong without any error.
    module, name = host_value.split(":")
    text = (kernel_root() / source).read_text()
    default = re.search(rf"^#define {macro} (\d+)\b", text, re.M)
    assert default is not None, f"{source}: no default for {macro}"
    assert int(default.group(1)) == getattr(__import__(module, fromlist=[name]), name)
