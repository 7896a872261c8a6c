"""Finetune a transformer with OneAligner's objective (Niu et al. 2022).

For a batch of N parallel pairs, f(S_m, T_n) = BERTScore-F1 over layer-``layer`` token embeddings
with *unnormalised* dot products (special tokens excluded, as at inference). Global in-batch
negatives: every one of the N^2 - N non-matching (m, n) pairs in the batch is a negative for every
positive, and each positive i is scored by contrastive cross-entropy

    loss_i = -log( exp(f_ii / tau) / (exp(f_ii / tau) + sum_{m != n} exp(f_mn / tau)) )

with temperature tau = 5 (we read "temperature 5" as dividing the scores by 5: unnormalised
BERTScore values of XLM-R states are large, and division keeps the softmax from saturating).
Paper settings: lr 3e-6 (AdamW), max length 100. Only layers <= ``layer`` influence f, so the
forward pass stops there; the saved model keeps every layer (the ones above are unchanged).

The model is written with ``save_pretrained`` into a temporary folder beside ``out`` and renamed
into place, so an interrupted run never leaves a half-written model where a finished one is
expected.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..errors import BadInputError


@dataclass
class TrainConfig:
    layer: int = 17
    lr: float = 3e-6
    temperature: float = 5.0
    batch_size: int = 32
    max_length: int = 100
    steps: int = 0  # 0: run ``epochs`` full passes
    epochs: int = 1
    seed: int = 0
    weight_decay: float = 0.0
    device: str = "auto"


@dataclass
class TrainResult:
    out: Path
    steps: int
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0


def read_pairs(path: str | os.PathLike) -> list[tuple[str, str]]:
    """Tab-separated ``source<TAB>target`` lines; blank lines skipped, anything else malformed is an error."""
    pairs = []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
                raise BadInputError(f"{path}:{no}: expected 'source<TAB>target', got {len(parts)} field(s)")
            pairs.append((parts[0], parts[1]))
    if len(pairs) < 2:
        raise BadInputError(f"{path}: need at least 2 pairs for in-batch negatives, found {len(pairs)}")
    return pairs


def global_contrastive_loss(f, temperature: float):
    """Mean over the diagonal of -log softmax against itself + all N^2 - N off-diagonal entries."""
    import torch

    z = f / temperature
    n = z.shape[0]
    off = z.masked_fill(torch.eye(n, dtype=torch.bool, device=z.device), float("-inf")).flatten()
    neg = torch.logsumexp(off, dim=0)
    pos = z.diagonal()
    return (torch.logaddexp(pos, neg) - pos).mean()


class _Truncated:
    """Context manager: run only the first ``k`` transformer blocks (BERT/XLM-R layout), restore after."""

    def __init__(self, model, k: int):
        self.model, self.k, self.saved = model, k, None

    def __enter__(self):
        import torch

        enc = getattr(self.model, "encoder", None)
        if enc is not None and isinstance(getattr(enc, "layer", None), torch.nn.ModuleList) and self.k < len(enc.layer):
            self.saved = enc.layer
            enc.layer = torch.nn.ModuleList(list(enc.layer)[: self.k])
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            self.model.encoder.layer = self.saved


def batch_scores(model, tokenizer, pairs: Sequence[tuple[str, str]], *, layer: int, max_length: int, device: str):
    """N x N BERTScore-F on raw dot products, differentiable."""
    from ..encoders.hf import token_states
    from ..encoders.onealigner import bertscore_f, content_mask

    src = [s for s, _ in pairs]
    tgt = [t for _, t in pairs]
    hs, att_s, sp_s = token_states(model, tokenizer, src, layer=layer, max_length=max_length, device=device)
    ht, att_t, sp_t = token_states(model, tokenizer, tgt, layer=layer, max_length=max_length, device=device)
    return bertscore_f(hs.float(), content_mask(att_s, sp_s), ht.float(), content_mask(att_t, sp_t))


def save_atomic(model, tokenizer, out: Path, meta: dict) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        (tmp / "xsimpp_training.json").write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
        old = None
        if out.exists():  # rename the previous model aside first: os.replace cannot replace a non-empty dir
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            os.replace(out, old)
        os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def train(pairs: Sequence[tuple[str, str]], model_path: str, out: str | os.PathLike, cfg: TrainConfig | None = None,
          log: Callable[[int, float], None] | None = None) -> TrainResult:
    import torch

    from ..encoders.hf import check_layer, load_transformer, resolve_model_dir, torch_device

    cfg = cfg or TrainConfig()
    if cfg.batch_size < 2:
        raise BadInputError("train onealigner: batch size must be >= 2 (in-batch negatives)")
    folder = resolve_model_dir(model_path, adapter="train onealigner")
    tokenizer, model = load_transformer(folder, adapter="train onealigner")
    layer = check_layer(cfg.layer, model, "train onealigner")
    device = torch_device(cfg.device)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    model.to(device).train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr,
                            weight_decay=cfg.weight_decay)
    order: list[int] = []
    steps = cfg.steps or cfg.epochs * math.ceil(len(pairs) / cfg.batch_size)
    losses: list[float] = []
    t0 = time.time()
    with _Truncated(model, layer):
        for step in range(steps):
            if len(order) < cfg.batch_size:  # reshuffle per epoch; a batch never holds a pair twice
                rest = list(range(len(pairs)))
                random.shuffle(rest)
                order = order + [i for i in rest if i not in set(order)]
            idx, order = order[: cfg.batch_size], order[cfg.batch_size :]
            f = batch_scores(model, tokenizer, [pairs[i] for i in idx], layer=layer, max_length=cfg.max_length,
                             device=device)
            loss = global_contrastive_loss(f, cfg.temperature)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
            if log:
                log(step + 1, losses[-1])
    model.eval()
    meta = {"objective": "onealigner-global-contrastive", "config": asdict(cfg), "base_model": str(model_path),
            "pairs": len(pairs), "steps": steps, "first_loss": losses[0], "last_loss": losses[-1]}
    save_atomic(model, tokenizer, Path(out), meta)
    return TrainResult(Path(out), steps, losses, time.time() - t0)
