"""Encoder registry: built-in adapters plus any third-party ones declared under the entry-point
group ``xsimpp.encoders`` (``name = "package.module:Class"``), loaded lazily by name."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, fields
from importlib.metadata import entry_points

from ..errors import MissingResourceError
from .base import Encoder, EncoderOptions, PairScorer, Requirement, VectorEncoder, declared_options

BUILTIN: dict[str, str] = {
    "e5-small": "xsimpp.encoders.e5_small:E5Small",
    "e5-small-nano": "xsimpp.encoders.e5:E5SmallNano",
    "use-m3": "xsimpp.encoders.use_m3:UseM3",
    "chargram": "xsimpp.encoders.chargram:CharGram",
    "sbert": "xsimpp.encoders.sbert:SBert",
    "labse": "xsimpp.encoders.labse:LaBSE",
    "laser": "xsimpp.encoders.laser:Laser",
    "onealigner": "xsimpp.encoders.onealigner:OneAligner",
    "hf": "xsimpp.encoders.hf:HFEncoder",
}
ENTRY_POINT_GROUP = "xsimpp.encoders"


@dataclass(frozen=True)
class EncoderEntry:
    name: str
    target: str  # "module:Class"
    source: str  # "built-in" or the distribution that declared it

    def load_class(self) -> type[Encoder]:
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)


def registry() -> dict[str, EncoderEntry]:
    entries = {n: EncoderEntry(n, t, "built-in") for n, t in BUILTIN.items()}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in entries:  # built-ins win: a plugin cannot shadow a named adapter
            dist = getattr(ep, "dist", None)
            entries[ep.name] = EncoderEntry(ep.name, ep.value, dist.name if dist else "plugin")
    return entries


def create_encoder(name: str, **options) -> Encoder:
    """Instantiate a registered encoder by name; options go to its constructor."""
    entries = registry()
    if name not in entries:
        raise MissingResourceError(f"Unknown encoder '{name}'; known: {', '.join(sorted(entries))} (see `xsimpp encoders`)")
    cls = entries[name].load_class()
    import inspect

    params = inspect.signature(cls.__init__).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    unknown = [k for k in options if k not in params and not takes_any]
    if unknown:
        flag_of = {f.name: f.metadata.get("flag") for f in fields(EncoderOptions)}  # --two-stage-k, not --rerank-k
        flags = ", ".join(flag_of.get(k) or "--" + k.replace("_", "-") for k in unknown)
        raise MissingResourceError(f"encoder '{name}' does not take {flags}")
    check = getattr(cls, "check_options", None)
    if check is not None:
        options = check(options)
    return cls(**options)


__all__ = ["BUILTIN", "EncoderOptions", "declared_options",
           "Encoder", "EncoderEntry", "PairScorer", "Requirement", "VectorEncoder", "create_encoder",
           "registry"]
