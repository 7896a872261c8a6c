"""Finetune a sentence encoder with the multiple negatives ranking loss, Tan & Koehn (2022, section
3.1 and appendix 6.3), on aligned documents or line-aligned files.

Model: the encoder's last layer, mean-pooled over every real token (the ``hf`` encoder's vectors,
so the checkpoint is scored as trained), one encoder for both languages. For each anchor source
s_i (its positive t_i), the negatives are a *window* of W neighbouring targets t_{i-W} .. t_{i+W}
(i excluded) in the aligned document order - within s_i's document - and R random targets from
outside that window. With d = cos and the scale c:

    loss_i = -log( exp(c d(s_i, t_i)) / sum_{t in {t_i} + negatives_i} exp(c d(s_i, t)) ),

averaged over the K anchors of a batch: the paper's equation (1) (``negatives="own"``, default).
The authors' released code trains sentence-transformers' ``MultipleNegativesRankingLoss`` on
(s_i, t_i, one negative) triplets instead, where every target of the batch is a candidate for
every anchor; ``negatives="in-batch"`` does that (each anchor also scored against the other
anchors' positives and negatives). A candidate whose text equals the anchor's positive is masked
out (a repeated sentence is not a negative); sentence-transformers does not do this.

Hyper-parameters. The paper gives W and R only as symbols; its code (align-filter,
``code/align/finetune.py``) uses a window of 6 (3 neighbours each side: W = 3), R = 6, mBERT with
mean pooling, batch size 2 triplets, sentence-transformers' ``fit`` defaults: AdamW lr 2e-5, weight
decay 0.01, linear warm-up over 10 % of the steps then linear decay, scale 20 (cosine x 20; the
paper's equation has no scale). Ours default to those (W = 3, R = 6, scale 20, lr 2e-5, weight decay
0.01, 10 % warm-up), batch 16 anchors (each with its own 12 negatives: 16 x 13 targets a step).

Data recipe: the pairs as given, minus every pair with a side in an evaluation set (OneAligner's
``filter_pairs``, the same manifest and atomic output as ``train onealigner``); document ids, when
given, follow the kept pairs.
"""

from __future__ import annotations

import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..errors import BadInputError
from .onealigner import (DEFAULT_MODEL, TrainResult, epoch_batches, load_base, manifest, optimizer_step,
                         planned_steps, resolve_prompt, save_atomic, token_states_by_length)

NEGATIVES = ("own", "in-batch")
ADAPTER = "train mnr"


@dataclass
class MNRConfig:
    window: int = 3  # W neighbours on each side (the authors' code: window 6 = 3 a side)
    random_negatives: int = 6  # R (the authors' code: 6)
    scale: float = 20.0  # cosine x scale as logits (sentence-transformers' MNR default; the paper: none)
    negatives: str = "own"  # "own": equation (1); "in-batch": every target of the batch (the authors' code)
    batch_size: int = 16
    lr: float = 2e-5
    weight_decay: float = 0.01
    warmup: float = 0.1  # share of the steps with a linear warm-up (then linear decay to 0)
    max_length: int = 128
    steps: int = 0  # 0: ``epochs`` passes over the anchors
    epochs: int = 1
    seed: int = 0
    device: str = "auto"
    prompt: str | None = None  # None: e5's "query: " for e5-small, else none


def documents_from_ids(ids: Sequence[str]) -> list[int]:
    """Document number per line: consecutive equal ids are one document (a later repeat of an id
    after another document starts a new one: the order is the alignment)."""
    out, doc = [], -1
    prev = object()
    for x in ids:
        if x != prev:
            doc += 1
            prev = x
        out.append(doc)
    return out


def negatives_for(i: int, docs: Sequence[int], cfg: MNRConfig, rng: random.Random) -> list[int]:
    """Indices of anchor i's negatives: the window t_{i-W}..t_{i+W} (i excluded, same document),
    then R random targets outside the window (and not i), distinct; fewer when the corpus is small."""
    n = len(docs)
    lo, hi = max(0, i - cfg.window), min(n - 1, i + cfg.window)
    window = [j for j in range(lo, hi + 1) if j != i and docs[j] == docs[i]]
    outside = n - (hi - lo + 1)
    r = min(cfg.random_negatives, outside)
    chosen: set[int] = set()
    while len(chosen) < r:  # rejection sampling: the window is tiny next to the corpus
        j = rng.randrange(n)
        if not lo <= j <= hi:
            chosen.add(j)
    return window + sorted(chosen)


def mean_pooled(model, tokenizer, sentences: Sequence[str], *, layer: int, max_length: int, device: str,
                prompt: str):
    """(B, d) mean of the layer's states over every real token, as the ``hf`` encoder pools; differentiable."""
    h, att, _ = token_states_by_length(model, tokenizer, sentences, layer=layer, max_length=max_length,
                                       device=device, prompt=prompt)
    m = att.unsqueeze(-1).to(h.dtype)
    return (h * m).sum(1) / m.sum(1)


def mnr_loss(src, tgt, positive, allowed, scale: float):
    """Mean over anchors of -log softmax(scale * cos) at the positive, over the allowed targets.
    src (B, d), tgt (U, d), positive (B,) indices into tgt, allowed (B, U) bool."""
    import torch

    s = torch.nn.functional.normalize(src, dim=-1)
    t = torch.nn.functional.normalize(tgt, dim=-1)
    logits = (scale * s @ t.T).masked_fill(~allowed, float("-inf"))
    return torch.nn.functional.cross_entropy(logits, positive)


def batch_targets(anchors: Sequence[int], pairs, docs, cfg: MNRConfig, rng: random.Random):
    """(target indices U, positive position per anchor, allowed (B, U) as lists)."""
    own = [[i] + negatives_for(i, docs, cfg, rng) for i in anchors]
    targets: list[int] = []
    where: dict[int, int] = {}
    for cands in own:
        for j in cands:
            if j not in where:
                where[j] = len(targets)
                targets.append(j)
    allowed = []
    for i, cands in zip(anchors, own):
        ok = set(where[j] for j in cands) if cfg.negatives == "own" else set(range(len(targets)))
        pos_text = pairs[i][1]
        row = [u in ok and (targets[u] == i or pairs[targets[u]][1] != pos_text) for u in range(len(targets))]
        allowed.append(row)
    return targets, [where[i] for i in anchors], allowed


def _check(cfg: MNRConfig, n: int) -> None:
    if cfg.negatives not in NEGATIVES:
        raise BadInputError(f"{ADAPTER}: negatives must be one of {', '.join(NEGATIVES)}, got '{cfg.negatives}'")
    if cfg.window < 0 or cfg.random_negatives < 0:
        raise BadInputError(f"{ADAPTER}: --window and --random must be >= 0")
    if cfg.window == 0 and cfg.random_negatives == 0 and cfg.negatives == "own":
        raise BadInputError(f"{ADAPTER}: no negatives (--window 0 --random 0); give some, or --negatives in-batch")
    if cfg.batch_size < 1 or not 0 < cfg.lr < float("inf") or not 0 < cfg.scale < float("inf") \
            or not 0 <= cfg.warmup < 1:  # written so that NaN fails too
        raise BadInputError(f"{ADAPTER}: batch size >= 1, lr > 0, scale > 0 and 0 <= warm-up < 1 are required")
    if n < 2:
        raise BadInputError(f"{ADAPTER}: {n} training pair(s); a positive needs at least one negative")
    if n < cfg.batch_size:
        raise BadInputError(f"{ADAPTER}: {n} training pairs is fewer than one batch of {cfg.batch_size}; give more "
                            "pairs or a smaller --batch-size")


def train_mnr(pairs: Sequence[tuple[str, str]], model_path: str = DEFAULT_MODEL, out: str | Path = "",
              cfg: MNRConfig | None = None, *, docs: Sequence[int] | None = None,
              log: Callable[[int, float], None] | None = None, data_info: dict | None = None,
              base=None) -> TrainResult:
    """Finetune ``model_path`` on ``pairs`` (in aligned order; ``docs``: document number per pair,
    default one document) and save it to ``out`` with the ``xsimpp_training.json`` manifest."""
    import torch

    from ..encoders.backbone.models import folder_revision, n_layers, torch_device

    cfg = cfg or MNRConfig()
    if not out:
        raise BadInputError(f"{ADAPTER}: give an output folder")
    _check(cfg, len(pairs))
    docs = list(docs) if docs is not None else [0] * len(pairs)
    if len(docs) != len(pairs):
        raise BadInputError(f"{ADAPTER}: {len(docs)} document ids for {len(pairs)} pairs")
    folder, tokenizer, model = base or load_base(model_path, ADAPTER)
    layer = n_layers(model)
    prompt = resolve_prompt(cfg.prompt, model_path)
    device = torch_device(cfg.device)
    rng = random.Random(cfg.seed)
    torch.manual_seed(cfg.seed)
    model.to(device).train()
    decay = [p for n_, p in model.named_parameters() if p.requires_grad and not any(
        k in n_ for k in ("bias", "LayerNorm.weight", "layer_norm.weight"))]
    rest = [p for n_, p in model.named_parameters() if p.requires_grad and all(p is not q for q in decay)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": rest, "weight_decay": 0.0}], lr=cfg.lr)
    steps = planned_steps(cfg, len(pairs))
    warm = int(steps * cfg.warmup)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(1, warm) if s < warm else max(0.0, (steps - s) / max(1, steps - warm)))
    kw = dict(layer=layer, max_length=cfg.max_length, device=device, prompt=prompt)
    losses: list[float] = []
    n_targets = 0
    t0 = time.perf_counter()
    for anchors in epoch_batches(len(pairs), cfg.batch_size, steps, rng.shuffle):
        targets, positive, allowed = batch_targets(anchors, pairs, docs, cfg, rng)
        n_targets += len(targets)
        src = mean_pooled(model, tokenizer, [pairs[i][0] for i in anchors], **kw)
        tgt = mean_pooled(model, tokenizer, [pairs[j][1] for j in targets], **kw)
        loss = mnr_loss(src, tgt, torch.tensor(positive, device=device),
                        torch.tensor(allowed, dtype=torch.bool, device=device), cfg.scale)
        optimizer_step(opt, loss, losses, log, sched)
    seconds = time.perf_counter() - t0
    model.eval()
    hyper = asdict(cfg)
    hyper.update(prompt=prompt, device=device, layer=layer, pooling="mean")
    res = TrainResult(Path(out), steps, losses, seconds)
    # "use": the hf encoder's defaults for this folder: last layer, mean pooling, this prompt
    meta = manifest(f"mnr: multiple negatives ranking loss, cosine x {cfg.scale:g}, window {cfg.window} + "
                    f"{cfg.random_negatives} random negatives ({cfg.negatives})", model_path, folder,
                    folder_revision(folder), pairs, {"documents": len(set(docs)), **(data_info or {})}, hyper, res,
                    cfg.batch_size, use={"prompt": prompt}, targets_per_step=round(n_targets / max(1, steps), 2))
    save_atomic(model, tokenizer, Path(out), meta)
    return res
