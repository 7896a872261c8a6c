"""Self-training of a sentence encoder on its own mined pairs (Keung et al. 2020, sections 2, 2.4, 3.1).

One round, on two monolingual sides (source: non-English; target: English):

1. Encode both sides (distinct texts) with the current model; the target side always with the
   frozen base (``f_tgt`` is "held fixed"), the source side with the model being trained (the
   base itself in round 1, so its cached vectors are reused).
2. Mine as Keung et al.'s protocol does (``xsimpp bucc --protocol keung``): ratio margin over the
   k = 4 nearest neighbours both ways, each source paired with its best target by margin (forward
   only), a threshold that keeps the best ``keep_fraction`` (2 %) of the source sentences, then the
   digit filter (ASCII ``[0-9]+``) and the edit-distance filter.
3. Positives: the best ``top_share`` (50 %) of the surviving pairs by score ("we finetune on the
   top 50% of the highest-scoring pairs from the retrieved bitext"). Negatives, per positive: the
   source's other k - 1 nearest targets ("hard", the paper's default) or k - 1 targets drawn at
   random from the target side ("random", the paper's Table 3 ablation).
4. Train only the source encoder on ``|cos(f_src(X), f_tgt(Y)) - Par(X, Y)|`` (Eq. 2; the S2ORC
   text lost the equation's delimiters: "f_src(X)ᵀ f_tgt(Y) / (‖f_src(X)‖ ‖f_tgt(Y)‖) − Par(X, Y)"
   with no exponent, and the loss is described as raising the cosine of positives and lowering it
   otherwise, which the signed difference would not bound; the absolute value is our reading),
   averaged over the labelled pairs of a minibatch. Adam, constant learning rate 1e-5, 2 epochs,
   minibatches of 100 sentence pairs (here: 100 // k sources with their k labelled targets, so
   each source is encoded once per step), dropout on (the model in training mode).

``rounds`` > 1 repeats 2-4 with the trained source encoder (the paper found more rounds unhelpful
on BUCC). Target vectors come from the frozen base and carry no gradient, so they are computed
once. The checkpoint holds the trained copy; its manifest's ``use.frozen`` names the base model,
its revision and the target languages, and ``--encoder hf --model OUT`` encodes those languages
with the base and every other language with the trained copy (``xsimpp.encoders.hf``).
"""

from __future__ import annotations

import hashlib
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..engine import DEFAULT_MARGIN
from ..errors import BadInputError

NEGATIVES = ("hard", "random")
# The paper's settings (sections 2.2-2.4, 3.1), printed beside ours by --help and docs/guides/training.md.
PAPER = {"model": "mBERT (bert-base-multilingual-cased)", "layer": "final (12 of 12), mean-pooled", "k": 4,
         "margin": "ratio", "keep_fraction": "~2 % (the prior share of parallel sentences)", "top_share": 0.5,
         "negatives": "hard (next k-1 neighbours)", "loss": "|cos(f_src(X), f_tgt(Y)) - Par(X, Y)|",
         "batch_size": "100 sentence pairs", "optimiser": "Adam, constant lr 1e-5", "epochs": 2, "rounds": 1}


@dataclass
class SelfTrainConfig:
    layer: int = -1  # the final layer, Keung et al.'s main setting
    prompt: str | None = None  # None: e5's "query: " for e5-small, else none
    k: int = 4
    margin: str = DEFAULT_MARGIN
    keep_fraction: float = 0.02
    digits: str | None = "ascii"
    max_edit_similarity: float | None = 0.5
    top_share: float = 0.5
    negatives: str = "hard"
    batch_size: int = 100  # labelled sentence pairs per minibatch
    lr: float = 1e-5
    epochs: int = 2
    rounds: int = 1
    max_length: int = 512
    seed: int = 0
    device: str = "auto"

    def check(self) -> None:
        if self.negatives not in NEGATIVES:
            raise BadInputError(f"self-train: negatives must be one of {', '.join(NEGATIVES)}, not {self.negatives!r}")
        if self.k < 2:
            raise BadInputError("self-train: k must be >= 2 (the positive and at least one negative)")
        if self.batch_size < self.k:
            raise BadInputError(f"self-train: a batch of {self.batch_size} pairs cannot hold one source with its "
                                f"{self.k} labelled targets")
        for name, v in (("keep fraction", self.keep_fraction), ("top share", self.top_share)):
            if not 0 < v <= 1:
                raise BadInputError(f"self-train: {name} must be in (0, 1], got {v}")
        if not 0 < self.lr < float("inf") or self.epochs < 1 or self.rounds < 1:  # NaN fails too
            raise BadInputError("self-train: the learning rate must be > 0 and epochs and rounds >= 1")


@dataclass
class MinedRound:
    """What one round mined and trained on."""

    candidates: int
    threshold: float
    retrieved: int  # above the threshold
    dropped: dict[str, int]
    kept: int  # after the filters
    positives: int
    examples: int  # labelled pairs (positives + negatives)
    steps: int = 0
    seconds: float = 0.0
    loss_first: float = float("nan")
    loss_last: float = float("nan")


@dataclass
class SelfTrainResult:
    out: Path
    rounds: list[MinedRound] = field(default_factory=list)

    @property
    def steps(self) -> int:
        return sum(r.steps for r in self.rounds)

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.rounds)

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else float("nan")


def language_aliases(code: str) -> list[str]:
    """The codes a language is known by (ISO 639-1 and 639-3 through langcodes, the code given),
    so that a checkpoint trained with ``en`` routes ``eng_Latn`` (FLORES) and ``eng`` (Tatoeba) too."""
    base = code.replace("-", "_").split("_")[0].lower()
    out = [base]
    try:
        import langcodes

        lang = langcodes.Language.get(base)
        out += [lang.language.lower(), lang.to_alpha3().lower()]
    except Exception:  # noqa: BLE001 - not a known tag: the code itself only
        pass
    return sorted(set(out))


def texts_checksum(texts: Sequence[str]) -> str:
    h = hashlib.sha256()
    for t in texts:
        h.update(t.encode("utf-8") + b"\n")
    return h.hexdigest()


# -- mining the training examples (numpy) -----------------------------------------------------------

@dataclass
class Examples:
    """Per training source: its text index and k labelled target indices (positive first)."""

    sources: np.ndarray  # (n,) source index
    targets: np.ndarray  # (n, k) target indices
    labels: np.ndarray  # (n, k) 1.0 for the positive, 0.0 for the negatives


def mine_examples(x: np.ndarray, y: np.ndarray, src_texts: Sequence[str], tgt_texts: Sequence[str],
                  cfg: SelfTrainConfig, rng: np.random.Generator, engine=None) -> tuple[Examples, MinedRound]:
    """Keung et al.'s retrieval, threshold and filters over (x, y), then the positives and negatives."""
    from ..engine import margin_knn
    from ..scoring.bucc import apply_filters, keep_fraction_threshold, unify_pairs

    n_x, n_y = len(x), len(y)
    k_fwd, k_bwd = min(cfg.k, n_y), min(cfg.k, n_x)
    knn = margin_knn(x, y, margin=cfg.margin, k=k_fwd, k_bwd=k_bwd, backward=True, config=engine)
    best, best_score = knn.forward_best()
    cands = unify_pairs(np.arange(n_x), best, best_score, k_fwd, k_bwd)
    threshold = keep_fraction_threshold(cands.score, cfg.keep_fraction, n_x)
    cands = cands.take(cands.score >= threshold)
    retrieved = len(cands)
    cands, dropped = apply_filters(src_texts, tgt_texts, cands, digits=cfg.digits,
                                   max_edit_similarity=cfg.max_edit_similarity)
    n_pos = int(round(cfg.top_share * len(cands)))
    pos = cands.take(np.arange(n_pos))  # candidates are sorted by score, best first
    n_neg = k_fwd - 1
    targets = np.empty((n_pos, 1 + n_neg), dtype=np.int64)
    for r, (s, t) in enumerate(zip(pos.src.tolist(), pos.tgt.tolist())):
        if cfg.negatives == "hard":  # the source's other nearest neighbours, nearest first
            neg = [j for j in knn.fwd_idx[s].tolist() if j != t][:n_neg]
        else:  # k - 1 distinct random targets other than the positive
            pick = rng.choice(n_y - 1, size=n_neg, replace=False)
            neg = [j + (j >= t) for j in pick.tolist()]
        targets[r] = [t] + neg
    labels = np.zeros(targets.shape, dtype=np.float32)
    labels[:, 0] = 1.0
    stats = MinedRound(candidates=n_x, threshold=float(threshold), retrieved=retrieved, dropped=dropped,
                       kept=len(cands), positives=n_pos, examples=int(targets.size))
    return Examples(pos.src.copy(), targets, labels), stats


# -- the model -----------------------------------------------------------------------------------

def keung_loss(src_vecs, tgt_vecs, labels):
    """Mean over labelled pairs of |cos(source, target) - label| (Eq. 2, our reading: module docstring)."""
    import torch

    cos = torch.nn.functional.cosine_similarity(src_vecs, tgt_vecs, dim=-1)
    return (cos - labels).abs().mean()


def _pooled(model, tokenizer, sentences: Sequence[str], *, layer: int, prompt: str, max_length: int, device: str):
    """Mean-pooled layer states of a batch, differentiable (the pooling ``hf`` encodes with)."""
    from ..encoders.backbone.batching import pad_batch, pad_id, tokenize
    from ..encoders.backbone.layers import hidden_layer, pool_states

    ids, specials, _ = tokenize(tokenizer, sentences, max_length=max_length, prompt=prompt)
    input_ids, att, _ = pad_batch(ids, specials, pad_id(tokenizer), device)
    return pool_states(hidden_layer(model, input_ids, att, layer), att, "mean")


def train_round(model, tokenizer, examples: Examples, y, src_texts: Sequence[str], cfg: SelfTrainConfig, *,
                layer: int, prompt: str, device: str, seed: int,
                log: Callable[[int, float], None] | None = None) -> tuple[int, list[float], float]:
    """``cfg.epochs`` passes over the examples; returns (steps, losses, seconds)."""
    import torch

    per_batch = max(1, cfg.batch_size // examples.targets.shape[1])
    order_rng = random.Random(seed)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    y_t = torch.as_tensor(np.asarray(y, dtype=np.float32), device=device)
    model.train()
    losses: list[float] = []
    t0 = time.perf_counter()
    for _ in range(cfg.epochs):
        order = list(range(len(examples.sources)))
        order_rng.shuffle(order)
        for start in range(0, len(order), per_batch):
            rows = order[start : start + per_batch]
            vecs = _pooled(model, tokenizer, [src_texts[examples.sources[r]] for r in rows], layer=layer,
                           prompt=prompt, max_length=cfg.max_length, device=device)
            tgt = y_t[torch.as_tensor(examples.targets[rows], device=device)]  # (b, k, d)
            lab = torch.as_tensor(examples.labels[rows], device=device)
            loss = keung_loss(vecs.unsqueeze(1).expand_as(tgt), tgt, lab)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(float(loss.detach()))
            if log:
                log(len(losses), losses[-1])
    model.eval()
    return len(losses), losses, time.perf_counter() - t0


def self_train(src_texts: Sequence[str], tgt_texts: Sequence[str], model_path: str, out: str | Path,
               cfg: SelfTrainConfig | None = None, *, tgt_lang: str = "en", src_lang: str | None = None,
               cache=None, engine=None, data_info: dict | None = None,
               log: Callable[[str], None] | None = None, progress: Callable[[int], None] | None = None,
               base=None) -> SelfTrainResult:
    """Self-train ``model_path`` on two monolingual sides and save the checkpoint to ``out``.

    ``cache``: the embedding cache of the base encoder (``hf --model model_path`` with this layer
    and prompt), used for the target side and for the source side of round 1. ``base``: that
    encoder already loaded (``HFEncoder(model_path, layer, prompt, max_length, device)``)."""
    import torch
    import transformers

    from ..version import __version__
    from ..cache import encode_cached
    from ..encoders.backbone.manifest import frozen_side
    from ..encoders.backbone.models import load_transformer
    from ..encoders.backbone.torch_backend import pool_sentences
    from ..encoders.hf import HFEncoder
    from ..scoring.bucc import unique_texts
    from .onealigner import save_atomic

    cfg = cfg or SelfTrainConfig()
    cfg.check()
    if not out:
        raise BadInputError("self-train: give an output folder")
    base = base or HFEncoder(model=model_path, layer=cfg.layer, prompt=cfg.prompt, max_length=cfg.max_length,
                             device=cfg.device)
    frozen_name = str(Path(model_path).resolve()) if Path(model_path).is_dir() else str(model_path)
    if frozen_side(base.folder) is not None:
        raise BadInputError(f"self-train: {model_path} is itself a self-trained checkpoint; start from its base "
                            "model and use --rounds N for more rounds")
    u_src, _ = unique_texts(src_texts)
    u_tgt, _ = unique_texts(tgt_texts)
    if len(u_src) < 2 or len(u_tgt) < cfg.k:
        raise BadInputError(f"self-train: {len(u_src)} distinct source and {len(u_tgt)} distinct target sentences "
                            f"are too few to mine with k={cfg.k}")
    say = log or (lambda _m: None)
    y, _ = encode_cached(base, u_tgt, cache=cache, lang=tgt_lang, progress=progress)
    x, _ = encode_cached(base, u_src, cache=cache, lang=src_lang, progress=progress)
    tokenizer, model = load_transformer(base.folder, adapter="self-train")  # the trainable copy
    model.to(base.device)
    torch.manual_seed(cfg.seed)
    rng = np.random.default_rng(cfg.seed)
    result = SelfTrainResult(Path(out))
    for r in range(cfg.rounds):
        if r > 0:  # re-mine with the source encoder trained so far
            x = pool_sentences(model, tokenizer, u_src, layer=base.layer, pooling="mean", prompt=base.prompt,
                               max_length=cfg.max_length, max_tokens=base.max_tokens, batch_size=base.batch_size,
                               device=base.device, progress=progress)
        examples, stats = mine_examples(x, y, u_src, u_tgt, cfg, rng, engine)
        say(f"round {r + 1}: {stats.retrieved} pairs above the threshold ({cfg.keep_fraction:g} of {len(u_src)}), "
            f"{stats.kept} after the filters {stats.dropped}, {stats.positives} positives, "
            f"{stats.examples} labelled pairs ({cfg.negatives} negatives)")
        if stats.positives == 0:
            raise BadInputError("self-train: no positive pair survived the threshold and the filters; give more "
                                "sentences or a larger --keep-fraction")
        steps, losses, seconds = train_round(model, tokenizer, examples, y, u_src, cfg, layer=base.layer,
                                             prompt=base.prompt, device=base.device, seed=cfg.seed + r,
                                             log=lambda s, v: say(f"round {r + 1} step {s}: loss {v:.4f}"))
        stats.steps, stats.seconds, stats.loss_first, stats.loss_last = steps, seconds, losses[0], losses[-1]
        result.rounds.append(stats)
    hyper = asdict(cfg)
    hyper.update(layer=base.layer, prompt=base.prompt, device=base.device)
    meta = {
        "objective": "keung-self-train: |cos(f_src(X), f_tgt(Y)) - Par(X, Y)|, target encoder frozen",
        "base_model": {"name": str(model_path), "folder": str(base.folder), "revision": base.revision},
        "data": {"src_sentences": len(src_texts), "tgt_sentences": len(tgt_texts), "src_distinct": len(u_src),
                 "tgt_distinct": len(u_tgt), "src_sha256": texts_checksum(src_texts),
                 "tgt_sha256": texts_checksum(tgt_texts), "src_lang": src_lang, "tgt_lang": tgt_lang,
                 **(data_info or {})},
        "hyperparameters": hyper,
        "paper": PAPER,
        "rounds": [asdict(s) for s in result.rounds],
        "steps": result.steps, "seconds": round(result.seconds, 3),
        "steps_per_second": round(result.steps_per_second, 4) if result.seconds > 0 else None,
        "use": {"layer": base.layer, "prompt": base.prompt, "pooling": "mean",
                "frozen": {"model": frozen_name, "revision": base.revision,
                           "languages": language_aliases(tgt_lang)}},
        "versions": {"xsimpp": __version__, "torch": torch.__version__.split("+")[0],
                     "transformers": transformers.__version__},
    }
    save_atomic(model, tokenizer, Path(out), meta)
    return result


__all__ = ["NEGATIVES", "PAPER", "SelfTrainConfig", "SelfTrainResult", "keung_loss", "mine_examples", "self_train"]
