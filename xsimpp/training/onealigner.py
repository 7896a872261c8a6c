"""Finetune a transformer with OneAligner's objective (Niu et al. 2022, sections 2.2, 2.4, 3.1-3.3).

Model. For a batch of N parallel pairs (S_i, T_i), f(S_m, T_n) = BERTScore-F1 over layer-``layer``
token states with *unnormalised* dot products (section 3.3: no pre-normalisation during training;
cosine at inference). Special tokens and the prompt's tokens (e5's ``query: ``) are left
out of the token sets: the prompt conditions the states but is not content. The in-batch
normalisation is part of the model (section 2.2 "In-Batch Normalization"), computed differentiably
on the N x N matrix:

    S_mn = f_mn - alpha * (r_m + c_n) + (2 alpha - 1) * mu,    alpha = 0.75,

with r_m = mean_n f_mn (row), c_n = mean_m f_mn (column), mu = mean_mn f_mn (whole batch).

Loss (section 2.4, "global in-batch negatives"). The N^2 scores are logits divided by the
temperature tau = 5; each positive S_ii is paired with *all* N^2 - N negatives S_mn (m != n) of the
batch - the other N - 1 positives are not in its denominator - and scored by cross-entropy:

    loss = mean_i [ -log( exp(S_ii/tau) / (exp(S_ii/tau) + sum_{m != n} exp(S_mn/tau)) ) ].

So each positive's softmax runs over N^2 - N + 1 logits of one batch; it is neither the row-wise
softmax of standard InfoNCE (S_ii against S_ij, j != i) nor one softmax over all N^2 entries.

What each normalisation term does to this loss:

- (2 alpha - 1) * mu is one number added to every logit of the batch. Every softmax above runs
  over logits of that same batch, so it cancels exactly: the loss *and its gradient* are the same
  with or without it (d loss / d c = -1 + sum of the softmax probabilities = 0 for a constant c,
  even though mu depends on the parameters). What it does do is centre the scores: the batch mean
  of S is mu - 2 alpha mu + (2 alpha - 1) mu = 0 exactly ("keep S_ij around 0", the paper's
  footnote 3). It matters where absolute scores matter - a score threshold (BUCC), a per-logit
  sigmoid loss, exp() overflow in a naive low-precision softmax - but not for this loss in exact
  arithmetic; the paper's remark that it "makes a difference during training" does not hold for
  the loss as the paper states it (tests/test_training.py checks the cancellation).
- -alpha * r_m - alpha * c_n differ from logit to logit, so in this global softmax *neither*
  cancels: they lower the logits of "popular" sentences (high average similarity to the batch)
  against every other pair's. In a row-wise softmax (row i over j) r_i would be constant along the
  row and cancel, leaving only the column term; in a column-wise softmax c_j would cancel instead.

Paper settings (section 3.2; ours are the defaults): batch 64, 3 epochs, lr 3e-6 (the optimiser is
not named; AdamW here, no weight decay, no warm-up), temperature 5, max length 100 tokens (here
including the 2 special tokens and the prompt's 3 on e5-small).
Only layers <= ``layer`` influence f, so the forward pass stops there; the saved model keeps every
layer (those above are unchanged, though their input is not).

Data recipe (section 3.1, ``filter_pairs``): drop pairs with fewer than 5 tokens on either side
(the model's tokenizer, special tokens and prompt not counted), then every pair whose source or
target equals an evaluation sentence after whitespace normalisation (runs of Unicode whitespace
become one space, ends stripped; case, punctuation and Unicode form are kept, so the match is
exact otherwise). Each dropped pair is counted under the first rule that drops it.

The model is written with ``save_pretrained`` into a temporary folder beside ``out`` and renamed
into place, so an interrupted run never leaves a half-written model where a finished one is
expected; ``xsimpp_training.json`` beside the weights records the base model's revision, the
data checksum, the hyper-parameters, the steps and their speed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from ..errors import BadInputError
from ..textio import atomic_dir, read_lines

DEFAULT_MODEL = "e5-small"  # the base every command defaults to (xsimpp.encoders.e5_weights.NAME)
# Token layer for e5-small (12 layers): the OneAligner scorer's e5-small default, chosen on FLORES dev
# (xsimpp.encoders.onealigner.DEFAULT_LAYER; a test checks they agree); the paper uses layer 8 of 12
# for base-size models.
DEFAULT_LAYER = 6
MIN_TOKENS = 5  # the paper drops pairs with fewer tokens than this on either side
# In-batch normalisation strength, the paper's 0.75; equal to xsimpp.encoders.onealigner.ALPHA (a
# test checks), not imported from there so that `xsimpp --help` loads no encoder module.
ALPHA = 0.75
MANIFEST = "xsimpp_training.json"


@dataclass
class TrainConfig:
    layer: int = DEFAULT_LAYER
    lr: float = 3e-6
    temperature: float = 5.0
    alpha: float = ALPHA
    batch_size: int = 64
    max_length: int = 100
    steps: int = 0  # 0: run ``epochs`` full passes
    epochs: int = 3
    seed: int = 0
    weight_decay: float = 0.0
    device: str = "auto"
    prompt: str | None = None  # None: e5's "query: " when the base is e5-small, else no prompt


@dataclass
class TrainResult:
    out: Path
    steps: int
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds > 0 else float("nan")


# -- data ---------------------------------------------------------------------------------------

def read_pairs(path: str | os.PathLike) -> list[tuple[str, str]]:
    """Tab-separated ``source<TAB>target`` lines; blank lines skipped, anything else malformed is an error."""
    pairs = []
    for no, line in enumerate(read_lines(path, allow_empty_lines=True), 1):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise BadInputError(f"{path}:{no}: expected 'source<TAB>target', got {len(parts)} field(s)")
        pairs.append((parts[0], parts[1]))
    return pairs


def read_parallel(src: str | os.PathLike, tgt: str | os.PathLike) -> list[tuple[str, str]]:
    """Two line-aligned files (line i of one translates line i of the other); no empty lines."""
    a, b = read_lines(src), read_lines(tgt)
    if len(a) != len(b):
        raise BadInputError(f"{src} has {len(a)} lines but {tgt} has {len(b)}; the two files must be line-aligned")
    return list(zip(a, b))


def normalise_ws(text: str) -> str:
    """The key overlap is matched on: whitespace runs -> one space, ends stripped; nothing else."""
    return " ".join(text.split())


@dataclass
class FilterReport:
    total: int
    kept: int
    dropped: dict[str, int]  # rule -> pairs dropped by it (each pair under the first rule that drops it)
    not_checked: list[str] = field(default_factory=list)  # evaluation sets not found here
    kept_index: list[int] = field(default_factory=list, repr=False)  # positions of the kept pairs in the input

    def summary(self) -> str:
        parts = [f"{n} {rule}" for rule, n in self.dropped.items()]
        text = f"{self.total} pairs, kept {self.kept}; dropped: " + (", ".join(parts) if parts else "none")
        if self.not_checked:
            text += f" (not checked, not found: {', '.join(self.not_checked)})"
        return text


def token_counts(tokenizer, sentences: Sequence[str]) -> list[int]:
    """Tokens per sentence without special tokens (and without any prompt)."""
    out: list[int] = []
    for s in range(0, len(sentences), 1024):
        enc = tokenizer(list(sentences[s : s + 1024]), add_special_tokens=False)
        out += [len(x) for x in enc["input_ids"]]
    return out


def filter_pairs(pairs: Sequence[tuple[str, str]], *, counts: Callable[[Sequence[str]], list[int]] | None = None,
                 min_tokens: int = MIN_TOKENS, held_out: Mapping[str, Iterable[str] | None] | None = None
                 ) -> tuple[list[tuple[str, str]], FilterReport]:
    """OneAligner's recipe: drop pairs under ``min_tokens`` tokens on either side (``counts`` gives
    tokens per sentence; None skips the rule), then pairs with a side in any ``held_out`` set (name ->
    sentences, None = not available here); see the module docstring for the match."""
    alive = list(range(len(pairs)))
    dropped: dict[str, int] = {}
    if counts is not None and min_tokens > 0:
        ns = counts([s for s, _ in pairs])
        nt = counts([t for _, t in pairs])
        short = {i for i in alive if ns[i] < min_tokens or nt[i] < min_tokens}
        dropped[f"under {min_tokens} tokens"] = len(short)
        alive = [i for i in alive if i not in short]
    not_checked = []
    for name, sentences in (held_out or {}).items():
        if sentences is None:
            not_checked.append(name)
            continue
        index: dict[str, list[int]] = {}
        for i in alive:
            for side in pairs[i]:
                index.setdefault(normalise_ws(side), []).append(i)
        hit: set[int] = set()
        for sentence in sentences:
            hit.update(index.get(normalise_ws(sentence), ()))
        dropped[f"in {name}"] = len(hit)
        alive = [i for i in alive if i not in hit]
    report = FilterReport(len(pairs), len(alive), dropped, not_checked, alive)
    return [pairs[i] for i in alive], report


def data_checksum(pairs: Sequence[tuple[str, str]]) -> str:
    """sha256 of the training pairs as trained on (``source<TAB>target\\n`` each, in order)."""
    h = hashlib.sha256()
    for s, t in pairs:
        h.update(f"{s}\t{t}\n".encode("utf-8"))
    return h.hexdigest()


# -- model and loss -----------------------------------------------------------------------------

def normalised_logits(f, alpha: float = ALPHA):
    """S = f - alpha (row mean + column mean) + (2 alpha - 1) total mean, differentiable (torch)."""
    row = f.mean(dim=1, keepdim=True)
    col = f.mean(dim=0, keepdim=True)
    return f - alpha * (row + col) + (2 * alpha - 1) * f.mean()


def global_contrastive_loss(s, temperature: float):
    """Mean over positives S_ii of -log softmax of S_ii/tau against all N^2 - N off-diagonal S_mn/tau."""
    import torch

    z = s / temperature
    n = z.shape[0]
    off = z.masked_fill(torch.eye(n, dtype=torch.bool, device=z.device), float("-inf")).flatten()
    neg = torch.logsumexp(off, dim=0)
    pos = z.diagonal()
    return (torch.logaddexp(pos, neg) - pos).mean()


def onealigner_loss(f, temperature: float = 5.0, alpha: float = ALPHA):
    """The training loss of an N x N BERTScore-F matrix whose diagonal holds the positives."""
    return global_contrastive_loss(normalised_logits(f, alpha), temperature)


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


def token_states_by_length(model, tokenizer, sentences: Sequence[str], *, layer: int, max_length: int, device: str,
                           prompt: str = "", chunk: int = 16):
    """``layers.token_states`` for one batch, run as length-sorted chunks of ``chunk`` sentences, each
    padded only to its own longest: a random batch of OLDI seed sentences pads to about twice its
    mean length, so one padded call does about twice the work. Same outputs as one call up to
    float rounding (a padded position's attention weight is 0); differentiable."""
    import torch

    from ..encoders.backbone.batching import mark_prompt, pad_batch, pad_id, tokenize
    from ..encoders.backbone.layers import hidden_layer

    ids, specials, n_prompt = tokenize(tokenizer, sentences, max_length=max_length, prompt=prompt)
    specials = [mark_prompt(sp, n_prompt) for sp in specials]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    width = max(len(x) for x in ids)
    parts, rows = [], []
    for c in range(0, len(order), max(1, chunk)):
        idx = order[c : c + chunk]
        input_ids, att, _ = pad_batch([ids[i] for i in idx], [specials[i] for i in idx], pad_id(tokenizer), device)
        h = hidden_layer(model, input_ids, att, layer)
        parts.append(torch.nn.functional.pad(h, (0, 0, 0, width - h.shape[1])))
        rows += idx
    h = torch.cat(parts)[torch.tensor(sorted(range(len(rows)), key=rows.__getitem__), device=device)]
    _, att, spec = pad_batch(ids, specials, pad_id(tokenizer), device)
    return h, att, spec


def batch_scores(model, tokenizer, pairs: Sequence[tuple[str, str]], *, layer: int, max_length: int, device: str,
                 prompt: str = ""):
    """N x N BERTScore-F on raw dot products (special and prompt tokens left out), differentiable."""
    from ..encoders.onealigner import bertscore_f, content_mask

    kw = dict(layer=layer, max_length=max_length, device=device, prompt=prompt)
    hs, att_s, sp_s = token_states_by_length(model, tokenizer, [s for s, _ in pairs], **kw)
    ht, att_t, sp_t = token_states_by_length(model, tokenizer, [t for _, t in pairs], **kw)
    return bertscore_f(hs.float(), content_mask(att_s, sp_s), ht.float(), content_mask(att_t, sp_t))


def save_atomic(model, tokenizer, out: Path, meta: dict) -> Path:
    """The model, its tokenizer and ``meta`` as MANIFEST, written as one folder (``textio.atomic_dir``)."""
    with atomic_dir(out) as tmp:
        model.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        (tmp / MANIFEST).write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
    return Path(out)


def resolve_prompt(prompt: str | None, model_path: str) -> str:
    """e5's ``query: `` for the e5-small base unless a prompt is given ('' = none)."""
    from ..encoders.e5_weights import PROMPT, is_bundled_name

    if prompt is not None:
        return str(prompt)
    return PROMPT if is_bundled_name(model_path) else ""


def load_base(model_path: str, adapter: str = "train onealigner"):
    """(folder, tokenizer, model) of the starting model (``adapter`` names the command in errors)."""
    from ..encoders.backbone.models import load_transformer, resolve_model_dir

    folder = resolve_model_dir(model_path, adapter=adapter)
    tokenizer, model = load_transformer(folder, adapter=adapter)
    return folder, tokenizer, model


def epoch_batches(n: int, batch_size: int, steps: int, shuffle: Callable[[list], None]) -> Iterator[list[int]]:
    """``steps`` batches of ``batch_size`` indices below ``n``, reshuffled (by ``shuffle``) each
    epoch; a batch spanning two epochs never holds an index twice."""
    order: list[int] = []
    for _ in range(steps):
        if len(order) < batch_size:
            rest = list(range(n))
            shuffle(rest)
            left = set(order)
            order = order + [i for i in rest if i not in left]
        idx, order = order[:batch_size], order[batch_size:]
        yield idx


def optimizer_step(opt, loss, losses: list[float], log: Callable[[int, float], None] | None, sched=None) -> None:
    """Backward, step (and the schedule), record the loss and report it with its step number."""
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if sched is not None:
        sched.step()
    losses.append(float(loss.detach()))
    if log:
        log(len(losses), losses[-1])


def planned_steps(cfg, n_pairs: int) -> int:
    """The optimizer steps a run takes: ``cfg.steps``, or ``cfg.epochs`` passes over the pairs (a
    ``TrainConfig`` or mnr's ``MNRConfig``: both count steps so)."""
    return cfg.steps or cfg.epochs * math.ceil(n_pairs / cfg.batch_size)


def train(pairs: Sequence[tuple[str, str]], model_path: str = DEFAULT_MODEL, out: str | os.PathLike = "",
          cfg: TrainConfig | None = None, log: Callable[[int, float], None] | None = None, *,
          data_info: dict | None = None, base=None, progress: Callable[[int], None] | None = None) -> TrainResult:
    """Finetune ``model_path`` on ``pairs`` and save it to ``out``. ``base``: an already loaded
    ``load_base(model_path)`` (the CLI loads it once to count tokens for the data recipe);
    ``progress(1)`` after every step."""
    import torch

    from ..encoders.backbone.models import check_layer, folder_revision, n_layers, torch_device

    cfg = cfg or TrainConfig()
    if not out:
        raise BadInputError("train onealigner: give an output folder")
    if cfg.batch_size < 2:
        raise BadInputError("train onealigner: batch size must be >= 2 (in-batch negatives)")
    if len(pairs) < cfg.batch_size:
        raise BadInputError(f"train onealigner: {len(pairs)} training pairs is fewer than one batch of "
                            f"{cfg.batch_size}; give more pairs or a smaller --batch-size")
    if not 0 < cfg.temperature < float("inf") or not 0 < cfg.lr < float("inf"):  # NaN fails too
        raise BadInputError("train onealigner: temperature and learning rate must be > 0")
    folder, tokenizer, model = base or load_base(model_path)
    layer = check_layer(cfg.layer, n_layers(model), "train onealigner")
    prompt = resolve_prompt(cfg.prompt, model_path)
    device = torch_device(cfg.device)
    revision = folder_revision(folder)
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    model.to(device).train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr,
                            weight_decay=cfg.weight_decay)
    steps = planned_steps(cfg, len(pairs))
    losses: list[float] = []
    t0 = time.perf_counter()
    with _Truncated(model, layer):
        for idx in epoch_batches(len(pairs), cfg.batch_size, steps, random.shuffle):
            f = batch_scores(model, tokenizer, [pairs[i] for i in idx], layer=layer, max_length=cfg.max_length,
                             device=device, prompt=prompt)
            optimizer_step(opt, onealigner_loss(f, cfg.temperature, cfg.alpha), losses, log)
            if progress:
                progress(1)
    seconds = time.perf_counter() - t0
    model.eval()
    hyper = asdict(cfg)
    hyper.update(layer=layer, prompt=prompt, device=device)
    res = TrainResult(Path(out), steps, losses, seconds)
    meta = manifest("onealigner: in-batch-normalised BERTScore-F as logits, global in-batch negatives", model_path,
                    folder, revision, pairs, data_info, hyper, res, cfg.batch_size, use={"layer": layer, "prompt": prompt})
    save_atomic(model, tokenizer, Path(out), meta)
    return res


def manifest(objective: str, model_path: str, folder, revision: str, pairs, data_info: dict | None, hyper: dict,
             res: TrainResult, batch_size: int, *, use: dict, **extra) -> dict:
    """The ``xsimpp_training.json`` record every `xsimpp train` checkpoint carries: base model and
    revision, data checksum, hyper-parameters, steps and speed, the loss, and ``use`` (the
    defaults the encoders read back: layer, prompt)."""
    import torch
    import transformers

    from ..version import __version__

    steps, seconds, losses = res.steps, res.seconds, res.losses
    return {
        "objective": objective,
        "base_model": {"name": str(model_path), "folder": str(folder), "revision": revision},
        "data": {"pairs": len(pairs), "sha256": data_checksum(pairs), **(data_info or {})},
        "hyperparameters": hyper,
        "steps": steps, "epochs": round(steps * batch_size / len(pairs), 3),
        "seconds": round(seconds, 3), "steps_per_second": round(steps / seconds, 4) if seconds > 0 else None,
        "loss": {"first": losses[0], "last": losses[-1]},
        "use": use,
        "versions": {"xsimpp": __version__, "torch": torch.__version__.split("+")[0],
                     "transformers": transformers.__version__},
        **extra,
    }
