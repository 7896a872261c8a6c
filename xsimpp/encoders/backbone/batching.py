"""Tokens and batches: sentences tokenised once (``tokenize``), grouped by ``bucket_batches`` so each
sentence always runs padded to a width set by its own length (its vector then never depends on its
batch), padded as torch tensors (``pad_batch``) or numpy arrays (``pad_rows``, ``padded_batches``),
built ahead of the device when it is not the CPU (``prefetched``)."""

from __future__ import annotations

import queue
import threading
from typing import Iterable, Iterator, Sequence

import numpy as np


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


BUCKET = 8  # tokens: a sentence of n tokens always runs padded to the next multiple of this


def bucket_width(n: int, limit: int = 512) -> int:
    """The padded width of a sentence of ``n`` tokens: a function of ``n`` alone."""
    return min(max(limit, n), -(-max(n, 1) // BUCKET) * BUCKET)


def batch_rows(width: int, max_tokens: int, max_rows: int | None = None) -> int:
    """Sentences in a full batch of ``width``: as many as ``max_tokens`` padded tokens hold, at most
    ``max_rows``; a function of the width and the budget alone, never of the sentences at hand."""
    return max(1, min(max_tokens // width, max_rows or max_tokens))


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
        rows = batch_rows(width, max_tokens, max_rows)
        members = groups[width]
        for start in range(0, len(members), rows):
            yield members[start : start + rows], width


def pad_rows(ids: Sequence[Sequence[int]], idx: Sequence[int], width: int, pad: int, rows: int | None = None):
    """(input ids, attention mask) int64 numpy arrays of the sentences ``idx``, right-padded to
    ``width``; ``rows`` beyond ``len(idx)`` repeat the first sentence (a fixed shape's filling)."""
    take = list(idx) + [idx[0]] * ((rows or len(idx)) - len(idx))
    x = np.full((len(take), width), pad, dtype=np.int64)
    att = np.zeros((len(take), width), dtype=np.int64)
    for row, i in enumerate(take):
        x[row, : len(ids[i])] = ids[i]
        att[row, : len(ids[i])] = 1
    return x, att


def padded_batches(ids: Sequence[Sequence[int]], pad: int, max_tokens: int, batch_size: int):
    """(indices, input ids, attention mask) as int64 numpy arrays per ``bucket_batches`` batch: the
    OpenVINO paths' batches, built exactly as ``pad_batch`` builds torch's."""
    for idx, width in bucket_batches([len(x) for x in ids], max_tokens, batch_size):
        yield (idx, *pad_rows(ids, idx, width, pad))


def prefetched(items: Iterable, depth: int = 2) -> Iterator:
    """``items``, produced up to ``depth`` ahead by a background thread: the host builds the next
    batches while the device runs this one. The items and their order are unchanged; an exception
    in the producer is raised here, and closing this generator stops the producer."""
    done, failed = object(), object()
    out: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item,)):
                    return
            put(done)
        except BaseException as e:  # handed to the consumer, raised there
            put((failed, e))

    worker = threading.Thread(target=produce, name="xsimpp-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            item = out.get()
            if item is done:
                return
            if item[0] is failed:
                raise item[1]
            yield item[0]
    finally:
        stop.set()
        worker.join()




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


def pad_id(tokenizer) -> int:
    return int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)
