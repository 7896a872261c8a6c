"""The torch backend (``path=torch-float32``): the reference, the only path for ``--device cuda|mps``,
and, with ``autocast=bf16``, torch's bfloat16 autocast variant (the GEMMs in bfloat16, vectors out in
float32; agreement measured in benchmarks/bench_e5_torch.py).

Numerics: float32 results differ in the last bits between AVX2 and AVX-512 kernels, so on a CPU the
identity names the torch build and the kernel ISA (``numerics``); on a GPU it names the torch build,
the CUDA version, the GPU model (cuBLAS picks its kernels by model) and any float32 matmul precision
below "highest" (TF32), so a GPU's vectors are never served or compared as a CPU's or another GPU's;
the autocast is named whenever set, and on a CPU with it the oneDNN ISA its bf16 products run in;
autocast on a CPU runs at fixed shapes, as a GPU does (``fixed_shapes``). torch's dynamic int8
quantisation is not offered: it scales activations per batch tensor, so a vector would depend on its
batch companions, and it agreed with float32 only to a cosine of about 0.99 (0.96 per tensor).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..openvino_cpu import onednn_isa
from .backend import Backend, Identity
from .batching import batch_rows, bucket_batches, pad_id, pad_rows, prefetched, tokenize
from .layers import drop_blocks_above, hidden_layer, pool_states
from .models import autocast_context, shared_transformer


# MKL's code branches (mkl_service.h's MKL_CBWR_* values) and its strict flag. On an AMD CPU its
# automatic branch is AUTO: its generic code, not one of the Intel branches.
MKL_BRANCHES = {2: "generic", 3: "compatible", 4: "sse2", 6: "ssse3", 7: "sse4_1", 8: "sse4_2", 9: "avx",
                10: "avx2", 11: "avx512_mic", 12: "avx512", 13: "avx512_mic_e1", 14: "avx512_e1"}
MKL_STRICT = 0x10000


def mkl_numerics() -> str:
    """MKL's part of torch's CPU numerics: the code branch its GEMM runs (Intel CPUs: by ISA; other
    vendors: its generic code; the bits differ between them, measured on e5-small) and whether its
    strict reproducible mode is on (``MKL_CBWR``, which ``import xsimpp`` sets; without it a row's
    result depends on its batch on Intel's AVX-512 branch). Read from MKL itself, through the service
    functions torch's CPU library exports; "" where torch has no MKL."""
    import ctypes
    import glob
    import os

    import torch

    if not torch.backends.mkl.is_available():
        return ""
    libs = glob.glob(os.path.join(os.path.dirname(torch.__file__), "lib", "*torch_cpu*"))
    try:
        lib = ctypes.CDLL(libs[0])
        # mkl_cbwr_get(MKL_CBWR_BRANCH): 1 = reproducibility off, 2 = automatic, else the branch;
        # mkl_cbwr_get(MKL_CBWR_ALL) adds the strict flag
        mode, flags = int(lib.mkl_serv_cbwr_get(1)), int(lib.mkl_serv_cbwr_get(-1))
        auto = int(lib.mkl_serv_cbwr_get_auto_branch())
    except (IndexError, OSError, AttributeError):
        return "-mkl-unknown"
    if mode <= 1:
        return f"-mkl-{MKL_BRANCHES.get(auto, f'branch{auto}')}-cnr-off"
    branch = MKL_BRANCHES.get(auto if mode == 2 else mode, f"branch{mode}")
    return f"-mkl-{branch}" + ("-strict" if flags & MKL_STRICT else "")


def numerics(device: str = "cpu", autocast: str | None = None) -> str:
    """What decides a torch model's float results beyond its weights: the torch build and, on a CPU,
    the vector ISA its kernels dispatch to (measured: AVX2 and AVX-512 kernels round differently)
    and MKL's code branch and mode (``mkl_numerics``), and under bf16 autocast the oneDNN ISA its
    bf16 products run in (``openvino_cpu.onednn_isa``: AMX tiles, AVX-512 BF16, or emulated below
    them; measured on e5-small, four ISAs, four sets of bits); on a CUDA GPU, the CUDA version, the
    GPU model and the float32 matmul precision."""
    import re

    import torch

    build = f"torch-{torch.__version__.split('+')[0]}"
    kind = torch.device(device).type
    if kind == "cpu":
        cap = torch.backends.cpu.get_cpu_capability() if hasattr(torch.backends, "cpu") else "unknown"
        return f"{build}-{cap}{mkl_numerics()}" + (f"-onednn-{onednn_isa()}" if autocast else "")
    if kind == "cuda":
        gpu = re.sub(r"[^A-Za-z0-9.]+", "-", torch.cuda.get_device_name(torch.device(device))).strip("-")
        precision = torch.get_float32_matmul_precision()
        return f"{build}-cuda{torch.version.cuda}-{gpu}" + ("" if precision == "highest" else f"-matmul-{precision}")
    return f"{build}-{kind}"


class Torch(Backend):
    """Hidden states from the shared torch weights (``shared_transformer``), cut above the layer
    the encoder reads (``drop_blocks_above``) and moved to its device on first use."""

    identity_fields = ("autocast", "numerics")

    def __init__(self, path, spec):
        super().__init__(path, spec)
        self._loaded: tuple | None = None

    @property
    def fixed(self) -> bool:
        """Whether this backend's passes run at fixed shapes (``fixed_shapes``)."""
        return fixed_shapes(self.spec.device, self.spec.autocast)

    def identity(self) -> Identity:
        shapes = f"-fixed-shapes-{self.spec.max_tokens}-tokens" if self.fixed else ""
        return Identity("torch-bf16-autocast" if self.spec.autocast else "torch-float32",
                        {"autocast": self.spec.autocast,
                         "numerics": numerics(self.spec.device, self.spec.autocast) + shapes})

    def _load(self) -> tuple:
        """(shared weights, model view), loaded on first use: a run whose vectors are all cached never
        imports transformers' model code nor reads the weights (the warm ten-language xsim++ run
        spent 23 of its 31 s there)."""
        if self._loaded is None:
            weights = shared_transformer(self.spec.folder, adapter=self.spec.adapter)
            model = drop_blocks_above(weights.model, self.spec.layer)
            model.to(self.spec.device)
            self._loaded = (weights, model)
        return self._loaded

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    @property
    def model(self):
        """The model view, cut above the encoder's layer."""
        return self._load()[1]

    @property
    def tokenizer(self):
        return self._load()[0].tok

    @property
    def hidden_size(self) -> int:
        return int(self.model.config.hidden_size)

    def batches(self, ids, specials, layers, max_tokens, batch_size):
        # at fixed shapes the budget decides the vectors, so it is the one the identity names (the
        # encoder's at construction), never a later value handed in here
        budget = self.spec.max_tokens if self.fixed else max_tokens
        return run_batches(self.model, ids, pad=pad_id(self.tokenizer), layers=layers, top=self.spec.layer,
                           device=self.spec.device, autocast=self.spec.autocast, max_tokens=budget,
                           batch_size=batch_size, fixed=self.fixed)

    def pooled(self, h, att, pooling: str) -> np.ndarray:
        return pool_states(h, att, pooling).float().cpu().numpy()

    def to_numpy(self, h) -> np.ndarray:
        return h.float().cpu().numpy()

    @property
    def pools_sides(self) -> bool:
        # at fixed shapes each width's last batch is filled up to full rows: encoded language by
        # language (~1 000 sentences, ~20 widths), FLORES-200 runs 1.73x the tokens it needs at 4 096
        # tokens a batch; pooled in chunks of 16 384, 1.04x (benchmarks/fixed_shape_padding.py)
        return self.fixed


def fixed_shapes(device: str, autocast: str | None = None) -> bool:
    """Whether the forward passes run at fixed shapes: off the CPU, and on it under bf16 autocast. A
    GPU's BLAS picks its kernel by the product's shape (measured on an H100: a sentence's vector moved
    by up to 4.8e-7 between batches of 1, 7 and 256), and so do oneDNN's bf16 kernels on a CPU with AMX
    (measured on an Intel Xeon: 19 of 20 e5-small vectors moved between a batch of 60 sentences and
    one of 20), so there every batch of a width is padded to the rows the token budget gives that
    width (``batch_rows``), whatever the batch size asked and the sentences at hand; a sentence's
    arithmetic is then fixed by its own length and the budget. In float32 on the CPU, MKL's strict
    mode already makes the rows independent of their companions, so nothing is padded there."""
    import torch

    return torch.device(device).type != "cpu" or autocast is not None


def prefetches(device: str) -> bool:
    """Whether the host builds batches ahead of the forward passes: off the CPU, where they run on
    the device while the host waits; on the CPU the forward passes take every core already."""
    import torch

    return torch.device(device).type != "cpu"


def run_batches(model, ids, *, pad: int, layers: Sequence[int], top: int, device: str,
                autocast: str | None, max_tokens: int, batch_size: int, fixed: bool | None = None,
                prefetch: bool | None = None):
    """``Backend.batches`` of a torch model whose top layer is ``top``, under inference mode and the
    autocast, which stay on while the caller pools a batch. ``fixed`` (default: ``fixed_shapes``)
    pads every batch to its width's full row count and ignores ``batch_size``; the padding rows
    repeat the batch's first sentence and are dropped before anything is yielded. ``prefetch``
    (default: ``prefetches``) builds the next batches on the host in a background thread, in pinned
    memory on CUDA, copied without blocking, so the device does not wait for the host's padding;
    the same tensors either way."""
    import torch

    dev = torch.device(device)
    fixed = fixed_shapes(device, autocast) if fixed is None else fixed
    prefetch = prefetches(device) if prefetch is None else prefetch
    pin = dev.type == "cuda"

    def host_batches():
        for idx, width in bucket_batches([len(x) for x in ids], max_tokens, None if fixed else batch_size):
            rows = batch_rows(width, max_tokens) if fixed else None
            x, att = (torch.from_numpy(a) for a in pad_rows(ids, idx, width, pad, rows))
            yield idx, (x.pin_memory(), att.pin_memory()) if pin else (x, att)

    with torch.inference_mode(), autocast_context(autocast, device):
        for idx, (x, att) in prefetched(host_batches()) if prefetch else host_batches():
            x, att = x.to(dev, non_blocking=pin), att.to(dev, non_blocking=pin)
            n = len(idx)
            if list(layers) == [top]:
                yield idx, att[:n], {top: hidden_layer(model, x, att, top)[:n]}
                continue
            every = model(input_ids=x, attention_mask=att, output_hidden_states=True).hidden_states
            yield idx, att[:n], {layer: every[layer][:n] for layer in layers}


def pool_sentences(model, tokenizer, sentences: Sequence[str], *, layer: int, pooling: str, prompt: str,
                   max_length: int, max_tokens: int, batch_size: int, device: str, autocast: str | None = None,
                   progress: Callable[[int], None] | None = None) -> np.ndarray:
    """(n, hidden) float32 pooled layer-``layer`` states of a torch model at hand (a checkpoint being
    trained), batched by ``bucket_batches`` (no gradient)."""
    out = np.empty((len(sentences), int(model.config.hidden_size)), dtype=np.float32)
    ids, _, _ = tokenize(tokenizer, sentences, max_length=max_length, prompt=prompt)
    for idx, att, hs in run_batches(model, ids, pad=pad_id(tokenizer), layers=[layer], top=layer,
                                    device=device, autocast=autocast, max_tokens=max_tokens, batch_size=batch_size):
        out[idx] = pool_states(hs[layer], att, pooling).float().cpu().numpy()
        if progress:
            progress(len(idx))
    return out
