"""xsimpp: how good is a multilingual sentence encoder at mining parallel text?

Proxies (xsim, xsim++, Tatoeba accuracy, BUCC F1), the xsim++ hard-negative generators, and
the pairwise ranking accuracy of those proxies against downstream BLEU.

The Python API (``xsimpp.evaluate``, ``score``, ``tatoeba``, ``bucc``, ``mine``, ``mining_f1``, ``compare``, ``filter_corpus``, ``download``, ``study``, ``run``;
see ``xsimpp.api``) is loaded on first use, so ``import xsimpp`` stays light.
"""

import os

# OpenBLAS's worker threads spin for 2^28 cycles after each GEMM, on the cores the engine's
# selection threads need next (measured: ~25 % slower selection on 2 cores). 2^4 cycles, the
# least it accepts, lets them sleep at once. OpenBLAS reads it once, when numpy loads it, hence
# here: `import xsimpp` comes before the package imports numpy, for the API and the CLI alike (a
# program that imported numpy itself before xsimpp keeps OpenBLAS's default). It changes no
# result; a user's own setting wins.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
# MKL (torch's CPU GEMM) on Intel CPUs picks its AVX-512 kernels by matrix shape, so a sentence's
# vector changed in the last bits with its batch companions (measured on e5-small: 43 of 60 FLORES
# rows, up to 5e-7). Its strict reproducible mode keeps the fastest branch and makes each row's
# result independent of the others (the same test passes); on AMD CPUs, where MKL takes its generic
# code, it changes nothing (the same bits). MKL reads it at its first call, hence here too; the
# torch backend's ``numerics`` names the mode in effect, so a user's own setting is named, not hidden.
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")

from .version import __version__  # noqa: E402

_API = ("Results", "RunOptions", "bucc", "compare", "download", "evaluate", "filter_corpus", "mine", "mining_f1", "run", "score",
        "study", "tatoeba")

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name == "study":  # the package, callable as the API's study function (see xsimpp.study)
        import importlib

        return importlib.import_module(".study", __name__)  # (`from . import study` would recurse here)
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'xsimpp' has no attribute {name!r}")
