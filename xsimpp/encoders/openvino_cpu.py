"""OpenVINO on the CPU, for every OpenVINO path (``e5_openvino``'s IRs, ``backbone.openvino_graph``'s in-memory
graphs): which kernels run here (the oneDNN ISA, which decides a float result's last bits and which
int8 kernels exist), the toolchain's versions, the compile settings, and the rule for when a CPU
runs OpenVINO by default. A leaf: it imports no other encoder module.
"""

from __future__ import annotations

import os

from ..errors import MissingResourceError

HOW_TO_GET = "pip install openvino nncf (dependencies of xsimpp: reinstall it)"
# oneDNN's CPU ISAs from the lowest up, as ONEDNN_MAX_CPU_ISA names them (the ones that decide
# which int8/float32 kernels an x86-64 CPU runs)
ISA_ORDER = ("SSE41", "AVX", "AVX2", "AVX2_VNNI", "AVX512_CORE", "AVX512_CORE_VNNI", "AVX512_CORE_BF16",
             "AVX512_CORE_AMX")


def require_openvino(what: str) -> None:
    import importlib.util

    missing = [m for m in ("openvino", "nncf") if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingResourceError(f"{what} needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
                                   f"not installed: {HOW_TO_GET} (or --encoder-opt path=torch-float32)")


def _cpu_flags() -> set[str]:
    """The CPU's feature flags as Linux names them; empty elsewhere (numpy's features then decide)."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def onednn_isa() -> str:
    """The oneDNN ISA OpenVINO's CPU kernels (and torch's bf16 autocast, through its own oneDNN) run
    here: the best the CPU has, capped by ``ONEDNN_MAX_CPU_ISA`` (or its older name
    ``DNNL_MAX_CPU_ISA``); the machine's architecture name on a CPU that is not x86-64."""
    import platform

    try:
        from numpy._core._multiarray_umath import __cpu_features__ as has
    except ImportError:  # numpy < 2
        from numpy.core._multiarray_umath import __cpu_features__ as has

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return platform.machine().lower()
    flags = _cpu_flags()
    best = "SSE41"
    for isa, present in (("AVX", has.get("AVX")), ("AVX2", has.get("AVX2")),
                         ("AVX2_VNNI", has.get("AVX2") and "avx_vnni" in flags),
                         ("AVX512_CORE", has.get("AVX512_SKX")),
                         ("AVX512_CORE_VNNI", has.get("AVX512_SKX") and has.get("AVX512VNNI")),
                         ("AVX512_CORE_BF16", has.get("AVX512_SKX") and has.get("AVX512VNNI") and has.get("AVX512BF16")),
                         ("AVX512_CORE_AMX", has.get("AVX512_SKX") and "amx_int8" in flags)):
        if present:
            best = isa
    cap = (os.environ.get("ONEDNN_MAX_CPU_ISA") or os.environ.get("DNNL_MAX_CPU_ISA") or "").upper()
    if cap in ISA_ORDER and ISA_ORDER.index(cap) < ISA_ORDER.index(best):
        best = cap
    return best.lower()


# OpenVINO quantises activations at run time only where the CPU has int8 dot products (its x64
# FullyConnected asks oneDNN for avx2_vnni or avx512_core_vnni); elsewhere the int8 weights would run
# another, untested kernel. That check ignores ONEDNN_MAX_CPU_ISA (measured here: capped to AVX512_CORE
# the vectors were bit-identical to the uncapped ones; capped to AVX2 no kernel could be built), so a
# cap below VNNI is refused as well: the label in the fingerprint would not say what ran.
INT8_DOT_ISAS = ("AVX2_VNNI", "AVX512_CORE_VNNI", "AVX512_CORE_BF16", "AVX512_CORE_AMX")


def has_int8_dot_products() -> bool:
    return onednn_isa().upper() in INT8_DOT_ISAS


# bf16 inference (e5-small's openvino-bf16) runs only on AMX's bf16 tiles, where its gates were
# measured. Elsewhere it would be other arithmetic under the same precision name: OpenVINO still
# accepts the bf16 hint under a cap (measured: AVX512_CORE_BF16 and AVX512_CORE_VNNI caps each gave
# other bits than AMX), AVX-512 BF16 CPUs without AMX (AMD Zen 4) run other kernels, and without
# bf16 hardware OpenVINO falls back to float32 (a silent change of what is measured).
def has_amx_bf16() -> bool:
    return onednn_isa() == "avx512_core_amx" and "amx_bf16" in _cpu_flags()


def toolchain() -> dict[str, str]:
    """The installed OpenVINO and NNCF versions, read without importing either (NNCF's import is slow)."""
    from importlib.metadata import version

    return {"openvino": version("openvino"), "nncf": version("nncf")}


# OpenVINO CPU settings of every OpenVINO path. INFERENCE_PRECISION_HINT f32: OpenVINO would pick bf16
# on CPUs that have it, a silent change of what is measured. CPU_RUNTIME_CACHE_CAPACITY: the compiled
# kernels kept per input shape; OpenVINO's default (5000) grew the process by ~40 MB a FLORES language
# (every bucket width x batch height is a shape: 4.3 GB peak over all 204); 100 kept it flat at the
# same speed, 0 cost 8 % (measured).
COMPILE_CONFIG = {"INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": "1", "PERFORMANCE_HINT": "LATENCY",
                  "CPU_RUNTIME_CACHE_CAPACITY": "100"}


def cpu_default_path(device: str, autocast: str | None) -> str:
    """``openvino-float32`` on an x86-64 CPU without autocast (where the e5-small gates were
    measured and passed: ``e5_small.default_path``), else ``torch-float32``."""
    if device == "cpu" and not autocast and onednn_isa().upper() in ISA_ORDER:
        return "openvino-float32"
    return "torch-float32"


def kernel_numerics() -> str:
    """The OpenVINO build and the kernels' ISA: what decides a float32 result beyond the model."""
    return f"openvino-{toolchain()['openvino']}-{onednn_isa()}"
