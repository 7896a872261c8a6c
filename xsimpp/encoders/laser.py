"""LASER2 / LASER3 sentence encoders in plain PyTorch (no fairseq).

Model: token embedding -> multi-layer bidirectional LSTM -> max-pool over time of the top layer's
outputs (padding excluded) = the sentence vector (1024-d for the published models). The official
checkpoint is a ``torch.save``d dict ``{"params": constructor kwargs, "model": state_dict,
"dictionary": {piece: id}}``; the state-dict keys (``embed_tokens.weight``, ``lstm.weight_ih_l0``,
``..._reverse``) are exactly ``nn.Embedding`` + ``nn.LSTM`` names, so it loads into the module
below without renaming.

Text path (as LASER's SPM pipeline): see ``laser_tokenize``; then pieces -> ids through the
checkpoint's dictionary (unknown -> <unk>), ``</s>`` appended, no ``<s>``. Special ids are pinned
to fairseq's 0..3 (<s>, <pad>, </s>, <unk>) as the reference does, whatever the dictionary says.

Files, for ``--model``: a ``.pt`` path (``X.spm`` / ``X.cvocab`` beside it), a folder holding
``laser2.pt``, or a name (``laser2``, ``laser3-fur_Latn.v1``) looked for in ``$LASER_MODEL_DIR``
then ``$XSIMPP_HOME/models/laser``. LASER3 students reuse ``laser2.spm`` when they have no SPM of
their own (as the official downloader does). LASER3 checkpoints in fairseq's transformer format
(no ``params`` key) are refused with a clear message: they need fairseq's transformer code.

Batching: sentences sorted by token count (longest first, stable), cut by ``batch_size`` sentences
and ``max_tokens`` tokens (LASER's defaults: 12000 tokens); the output is put back in input order.
Each sentence's vector does not depend on its batch neighbours (packed sequences, masked max-pool).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..errors import BadInputError, MissingResourceError
from ..paths import user_data_dir
from ..textio import file_sha256
from .base import Requirement, VectorEncoder

BOS, PAD, EOS, UNK = 0, 1, 2, 3
DOWNLOAD = ("download laser2.pt, laser2.spm, laser2.cvocab (or laser3-<lang>.v1.pt) from LASER's model page "
            "(python -m laser_encoders.download_models on a machine with network) into $LASER_MODEL_DIR")


def model_dirs() -> list[Path]:
    dirs = []
    if os.environ.get("LASER_MODEL_DIR"):
        dirs.append(Path(os.environ["LASER_MODEL_DIR"]).expanduser())
    dirs.append(user_data_dir() / "models" / "laser")
    return dirs


def locate(model: str) -> tuple[Path, Path, Path | None]:
    """(checkpoint .pt, sentencepiece model, .cvocab or None) for a path, folder or model name."""
    p = Path(model).expanduser()
    if p.is_dir():
        pt = p / "laser2.pt"
        if not pt.is_file():
            cands = sorted(p.glob("*.pt"))
            if len(cands) != 1:
                raise MissingResourceError(f"laser: {p} has {'no' if not cands else 'several'} .pt checkpoint(s); "
                                           "pass the .pt file itself")
            pt = cands[0]
    elif p.suffix == ".pt" or os.sep in model:
        pt = p
    else:
        stem = model[:-3] if model.endswith(".pt") else model
        tried = [d / f"{stem}.pt" for d in model_dirs()]
        pt = next((t for t in tried if t.is_file()), tried[0])
        if not pt.is_file():
            raise MissingResourceError(f"laser: model '{model}' not found (looked for {', '.join(map(str, tried))}); "
                                       f"{DOWNLOAD}")
    if not pt.is_file():
        raise MissingResourceError(f"laser: checkpoint {pt} does not exist; {DOWNLOAD}")
    stem = pt.with_suffix("")
    spm = next((s for s in (stem.with_suffix(".spm"), pt.parent / "laser2.spm") if s.is_file()), None)
    if spm is None:
        raise MissingResourceError(f"laser: no sentencepiece model beside {pt} (looked for {stem.name}.spm and "
                                   f"laser2.spm in {pt.parent}); {DOWNLOAD}")
    cvocab = next((c for c in (stem.with_suffix(".cvocab"), pt.parent / "laser2.cvocab") if c.is_file()), None)
    return pt, spm, cvocab


def read_cvocab(path: Path) -> dict[str, int]:
    """A fairseq dictionary file ("piece count" lines) as ids: the 4 specials first, then file order."""
    d = {"<s>": BOS, "<pad>": PAD, "</s>": EOS, "<unk>": UNK}
    for line in path.read_text(encoding="utf-8").splitlines():
        piece = line.rsplit(" ", 1)[0] if " " in line else line
        if piece:
            d.setdefault(piece, len(d))
    return d


def _module():
    import torch
    from torch import nn

    class BiLSTMEncoder(nn.Module):
        """Embedding + (bi)LSTM + masked max-pool: LASER's encoder, with the checkpoint's names."""

        def __init__(self, num_embeddings: int, padding_idx: int, embed_dim: int = 320, hidden_size: int = 512,
                     num_layers: int = 1, bidirectional: bool = False, left_pad: bool = True,
                     padding_value: float = 0.0):
            super().__init__()
            # left_pad / padding_value are in the published params but unused at inference: the
            # reference right-pads and masks padding to -inf before the max-pool, as we do.
            self.embed_tokens = nn.Embedding(num_embeddings, embed_dim, padding_idx=padding_idx)
            self.lstm = nn.LSTM(input_size=embed_dim, hidden_size=hidden_size, num_layers=num_layers,
                                bidirectional=bidirectional)
            self.output_units = hidden_size * (2 if bidirectional else 1)

        def forward(self, tokens: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
            """tokens (B, T) right-padded, lengths (B,) -> (B, output_units)."""
            x = self.embed_tokens(tokens).transpose(0, 1)  # T x B x C
            packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), enforce_sorted=False)
            out, _ = self.lstm(packed)  # zero initial states, as the reference
            out, _ = nn.utils.rnn.pad_packed_sequence(out, total_length=tokens.shape[1])
            steps = torch.arange(tokens.shape[1], device=tokens.device)[:, None]
            pad = (steps >= lengths.to(tokens.device)[None, :]).unsqueeze(-1)  # T x B x 1
            return out.masked_fill(pad, float("-inf")).max(dim=0).values

    return BiLSTMEncoder


@functools.lru_cache(maxsize=None)
def _sha(path: str, size: int, mtime: int) -> str:
    return file_sha256(path)


def _stamp_sha(p: Path) -> str:
    st = p.stat()
    return _sha(str(p.resolve()), st.st_size, st.st_mtime_ns)


class Laser(VectorEncoder):
    name = "laser"
    language_agnostic = True  # encode() ignores lang: punct_lang is fixed in config, LASER3 students are separate ids
    description = "LASER2/LASER3 BiLSTM encoders in plain torch (official .pt + .spm); --model laser2|laser3-xxx.v1|PATH"

    def __init__(self, model: str = "laser2", batch_size: int = 128, max_tokens: int = 12000, device: str = "auto",
                 punct_lang: str = "en"):
        try:
            import torch
        except ImportError:
            raise MissingResourceError("laser needs torch: pip install torch") from None
        from .backbone.models import torch_device
        from .laser_tokenize import LaserTextPipeline

        self.model_name = str(model)
        self.pt, self.spm, self.cvocab = locate(self.model_name)
        try:
            ckpt = torch.load(self.pt, map_location="cpu", weights_only=True)
        except Exception as e:  # noqa: BLE001 - truncated file, non-checkpoint, unsafe pickle content
            raise MissingResourceError(f"laser: cannot read checkpoint {self.pt} ({type(e).__name__}: {e})") from e
        if not isinstance(ckpt, dict) or "params" not in ckpt or "model" not in ckpt:
            raise MissingResourceError(
                f"laser: {self.pt} is not a LASER BiLSTM checkpoint (no 'params'/'model'); transformer-based "
                "LASER3 students need fairseq and are not supported here")
        dictionary = ckpt.get("dictionary")
        if dictionary is None:
            if self.cvocab is None:
                raise MissingResourceError(f"laser: {self.pt} has no dictionary and no .cvocab beside it")
            dictionary = read_cvocab(self.cvocab)
        self.dictionary = dict(dictionary)
        self.dictionary.update({"<s>": BOS, "<pad>": PAD, "</s>": EOS, "<unk>": UNK})
        self.params = dict(ckpt["params"])
        self._net = _module()(**self.params)
        self._net.load_state_dict(ckpt["model"])  # strict: a mismatched checkpoint fails loudly
        self._net.eval()
        self.device = torch_device(device)
        self._net.to(self.device)
        self.text = LaserTextPipeline(self.spm, lang=punct_lang)
        if batch_size < 1 or max_tokens < 1:
            raise BadInputError("laser: batch_size and max_tokens must be positive")
        self.batch_size, self.max_tokens = batch_size, max_tokens
        self._revision = hashlib.sha256((_stamp_sha(self.pt) + _stamp_sha(self.spm)).encode()).hexdigest()[:16]

    @property
    def id(self) -> str:
        return f"laser:{self.pt.stem}"

    @property
    def revision(self) -> str:
        return self._revision

    def config(self) -> dict:
        return {"punct_lang": self.text.lang, "lowercase": True, "dim": self._net.output_units}

    def ids(self, sentence: str) -> list[int]:
        pieces = self.text(sentence)
        return [self.dictionary.get(p, UNK) for p in pieces] + [EOS]

    def batches(self, token_ids: list[list[int]]):
        """Index lists: longest first (stable), at most batch_size sentences and max_tokens tokens."""
        order = sorted(range(len(token_ids)), key=lambda i: -len(token_ids[i]))
        cur: list[int] = []
        ntok = 0
        for i in order:
            n = len(token_ids[i])
            if cur and (len(cur) == self.batch_size or ntok + n > self.max_tokens):
                yield cur
                cur, ntok = [], 0
            cur.append(i)
            ntok += n
        if cur:
            yield cur

    def encode(self, sentences: Sequence[str], *, lang: str | None = None,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
        import torch

        token_ids = [self.ids(s) for s in sentences]
        out = np.empty((len(sentences), self._net.output_units), dtype=np.float32)
        with torch.inference_mode():
            for idx in self.batches(token_ids):
                lengths = torch.tensor([len(token_ids[i]) for i in idx])
                toks = torch.full((len(idx), int(lengths.max())), PAD, dtype=torch.long)
                for r, i in enumerate(idx):
                    toks[r, : len(token_ids[i])] = torch.tensor(token_ids[i])
                out[idx] = self._net(toks.to(self.device), lengths).float().cpu().numpy()
                if progress:
                    progress(len(idx))
        return out

    @classmethod
    def requirements(cls) -> list[Requirement]:
        reqs = [Requirement(m, importlib.util.find_spec(m) is not None, f"pip install {p}")
                for m, p in (("torch", "torch"), ("sentencepiece", "sentencepiece"), ("sacremoses", "sacremoses"))]
        found = any((d / "laser2.pt").is_file() for d in model_dirs())
        where = " or ".join(str(d) for d in model_dirs())
        reqs.append(Requirement(f"laser2.pt in {where}", found, DOWNLOAD + " (or pass --model PATH)"))
        return reqs
