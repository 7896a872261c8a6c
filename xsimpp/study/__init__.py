"""Which proxy predicts mining? The proxy-validation study of `xsimpp study`: a grid of encoders
x languages, the proxies per cell, mining F1 on gold hidden among real distractors as ground
truth, and the ranking statistics of `xsimpp rank` between them.

config (TOML, presets) -> data (gold, negatives, distractor pool) -> encoders (cached, shared
forward passes) -> run (proxies, mining, analysis) -> output (atomic folder, HTML report)."""

import sys
import types


class _CallablePackage(types.ModuleType):
    """`xsimpp.study(...)` is the API's study function, and `xsimpp.study.config` this package: Python
    binds `xsimpp.study` to the package as soon as any of its modules is imported (the function's first
    call does), so the package itself is callable, and a second call works like the first."""

    def __call__(self, *args, **kwargs):
        from .pipeline import study

        return study(*args, **kwargs)

    @property
    def __signature__(self):
        import inspect

        from .pipeline import study

        return inspect.signature(study)


sys.modules[__name__].__class__ = _CallablePackage
