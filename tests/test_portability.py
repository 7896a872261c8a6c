"""Results do not depend on the BLAS kernel, the ISA the compiled selection was built for, or the
thread count: the same digests from processes running OpenBLAS's native kernel and numba's native
target, and OpenBLAS's Haswell (AVX2) kernel with numba compiling for Haswell (AVX2: the explicit
vector code of engine.kernels splits into 256-bit halves), with one thread and with all.

numpy's OpenBLAS reads OPENBLAS_CORETYPE when it loads, and numba NUMBA_CPU_NAME, so each setting
needs its own process (the Haswell one with a numba cache of its own). On an AVX2-only machine both
runs take the Haswell kernel: the test still checks thread counts and `mine` budgets, and says in
its output that the kernels were the same.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

from conftest import missing, shared_data_dir

PROBE = Path(__file__).resolve().parent / "portability_probe.py"


def run_probe(tmp_path: Path, name: str, **env) -> dict[str, str]:
    out = tmp_path / name
    out.mkdir()
    full = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}  # native unless asked
    data = shared_data_dir()
    if data is not None:
        full["XSIMPP_DATA_DIR"] = str(data)
    full.update(env)
    done = subprocess.run([sys.executable, str(PROBE), str(out)], env=full, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_same_results_on_every_kernel_and_thread_count(tmp_path, capsys):
    native = run_probe(tmp_path, "native")
    # (numba takes the host's features unless told: -avx512f drops AVX-512 and what depends on it)
    avx2 = {"NUMBA_CPU_NAME": "haswell", "NUMBA_CPU_FEATURES": "-avx512f", "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    haswell = run_probe(tmp_path, "haswell", OPENBLAS_CORETYPE="Haswell", PROBE_THREADS="1",
                        **(avx2 if platform.machine().lower() in ("x86_64", "amd64") else {}))
    one_thread = run_probe(tmp_path, "one", PROBE_THREADS="1")
    raw_differs = native.pop("raw_gemm") != haswell.pop("raw_gemm")
    one_thread.pop("raw_gemm")
    targets = native.pop("numba_target"), haswell.pop("numba_target")
    one_thread.pop("numba_target")
    assert targets[1] == ("haswell -avx512f" if platform.machine().lower() in ("x86_64", "amd64") else targets[0])
    assert native == haswell, {k: (native[k], haswell.get(k)) for k in native if native[k] != haswell.get(k)}
    assert native == one_thread
    assert native["mine_64MB"] == native["mine_4GB"]  # the memory budget changes no byte of the output
    with capsys.disabled():
        print(f"\n[portability] raw float32 GEMM {'differs' if raw_differs else 'is identical'} between the "
              f"native and Haswell kernels (numba compiled for {targets[0]} and {targets[1]}); every reported array "
              f"is identical ({len(native)} computations)")
    if "flores_chargram" not in native:  # everything else was checked; say what was not
        missing("real data not found: the FLORES computation of the portability probe did not run", data=True)
