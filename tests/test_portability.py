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

import numpy as np
import pytest

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


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="rsqrtss is x86-64's")
def test_the_rsqrt_checksum_is_the_cpus_approximation_not_a_compilers():
    """rsqrt_numerics checksums what the CPU's rsqrtss answers: within the ISA's bound (relative error
    at most 1.5 * 2**-12) yet almost never the correctly rounded 1/sqrt (so no compiler folded it into
    an exact division), and the same under another numba target (the instruction decides, not the
    code around it)."""
    from xsimpp.encoders.e5 import rsqrt_inputs, rsqrt_numerics, rsqrt_table

    x, got = rsqrt_inputs(), rsqrt_table()
    assert x.size == 1 << 24 and x.min() == 0.5 and x.max() < 2 and len(np.unique(x)) == x.size
    exact = 1 / np.sqrt(x.astype(np.float64))
    assert np.abs(got / exact - 1).max() <= 1.5 * 2.0 ** -12
    assert np.mean(got == exact.astype(np.float32)) < 0.01
    again = subprocess.run([sys.executable, "-c", "from xsimpp.encoders.e5 import rsqrt_numerics; print(rsqrt_numerics())"],
                           capture_output=True, text=True, env={**os.environ, "NUMBA_CPU_NAME": "haswell"})
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stdout.split()[-1] == rsqrt_numerics()
