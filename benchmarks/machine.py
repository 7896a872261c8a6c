"""What a benchmark figure was measured on: CPU model, the widest vector ISA it has and the
dot-product and matrix extensions beside it (VNNI, BF16, FP16, AMX: what the int8 and half-precision
paths run on), the kernels the libraries actually chose (OpenBLAS's core type, numba's target CPU),
the cores this process may use and the load. Every benchmark that writes results puts this beside
its numbers."""

from __future__ import annotations

import os
import platform
import subprocess

# /proc/cpuinfo's names of the extensions that change which kernels the encoders' paths take
EXTENSIONS = ("avx_vnni", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_int8", "amx_fp16")


def cpu_info() -> dict:
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name") and model in ("", "x86_64"):
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "other"
    extensions = [f for f in EXTENSIONS if f in flags]
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count()
    return {"cpu": model, "isa": isa, "isa_extensions": extensions, "cores": cores, "load": round(os.getloadavg()[0], 2)}


def kernel_info() -> dict:
    """The BLAS kernel numpy's OpenBLAS picked (OPENBLAS_CORETYPE changes it) and the CPU numba
    compiles for (NUMBA_CPU_NAME changes it); call after numpy and numba are in use."""
    import numba

    try:
        from threadpoolctl import threadpool_info  # xsimpp's engine depends on it
    except ImportError:
        blas = "unknown (no threadpoolctl to ask)"
    else:
        blas = next((f"{i['internal_api']} {i.get('architecture') or ''}".strip() for i in threadpool_info()
                     if i["user_api"] == "blas"), "unknown")
    return {"blas": blas, "numba_cpu": numba.config.CPU_NAME or _host_cpu()}


def _host_cpu() -> str:
    import llvmlite.binding as ll

    return ll.get_host_cpu_name()


def git_commit() -> str:
    """The checkout's commit, '+' marking uncommitted changes ('unknown' outside a git checkout)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+" if dirty else "")
