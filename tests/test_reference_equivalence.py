"""The engine against a straightforward re-statement of LASER's source/xsim.py (two faiss searches +
explicit loops) on real embeddings: FLORES-200 devtest and the demo corpus, three margins, text and
index mode, xsim++ with its error-type breakdown.

LASER's similarities are float32 faiss products, whose last bits depend on the machine; xsimpp's
are exact (``xsimpp.engine.exact``). The two can only disagree where LASER's choice is decided by
float32 noise: two candidates whose exact scores are equal or closer than float32 rounding. So:
- the same loops run on exact similarities give exactly xsimpp's counts and error types, and
- every sentence where faiss-LASER picks another neighbour than xsimpp is such a near-tie, checked
  one by one (on FLORES there are none: the counts are equal).
"""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from conftest import DATA_HINT, missing, shared_data_dir
from xsimpp.datasets import Demo, Flores200, load_augmented
from xsimpp.encoders import create_encoder
from xsimpp.engine import normalize
from xsimpp.engine.exact import gemm_error
from xsimpp.engine.kernels import similarity_matrix
from xsimpp.scoring import xsim

_EXACT: dict = {}


def exact_similarity(x, y):
    """The exact similarity matrix (compiled twin of exact.exact_similarity; test_engine checks the
    two are equal), memoised: the same matrices serve several parametrisations."""
    key = (x.tobytes(), y.tobytes())
    if key not in _EXACT:
        _EXACT[key] = similarity_matrix(normalize(x), normalize(y))
    return _EXACT[key]


def faiss_neighbours(x, y, k):
    """LASER: faiss-normalised float32 vectors, IndexFlatIP searches both ways."""
    x, y = x.copy(), y.copy()
    faiss.normalize_L2(x)
    faiss.normalize_L2(y)
    index_x, index_y = faiss.IndexFlatIP(x.shape[1]), faiss.IndexFlatIP(y.shape[1])
    index_x.add(x)
    index_y.add(y)
    cos_xy, idx_xy = index_y.search(x, k)
    cos_yx, _ = index_x.search(y, k)
    return cos_xy, idx_xy, cos_yx


def exact_neighbours(x, y, k):
    """The same searches on exact similarities (ties to the lower index)."""
    s = exact_similarity(x, y)
    idx_xy = np.argsort(-s, axis=1, kind="stable")[:, :k]
    cos_yx = -np.sort(-s.T, axis=1)[:, :k]
    return np.take_along_axis(s, idx_xy, 1), idx_xy, cos_yx


def laser_loop(cos_xy, idx_xy, cos_yx, margin, k):
    """LASER's candidate loop: margin score of each of x_i's k candidates, first maximum wins."""
    if margin == "absolute":
        return idx_xy[:, 0], cos_xy[:, 0]
    avg_x, avg_y = cos_xy.mean(axis=1), cos_yx.mean(axis=1)
    nn, best = np.empty(len(cos_xy), np.int64), np.empty(len(cos_xy))
    for i in range(len(cos_xy)):
        scores = []
        for j in range(k):
            b = (avg_x[i] + avg_y[idx_xy[i, j]]) / 2
            scores.append(cos_xy[i, j] / b if margin == "ratio" else cos_xy[i, j] - b)
        nn[i], best[i] = idx_xy[i, int(np.argmax(scores))], max(scores)
    return nn, best


def count(nn, tgt_lines=None, errtypes=None):
    if tgt_lines is None:
        return int((nn != np.arange(len(nn))).sum()), {}
    errors, types = 0, {}
    for i in range(len(nn)):
        if tgt_lines[nn[i]] != tgt_lines[i]:
            errors += 1
            if errtypes is not None:
                entry = errtypes.get(tgt_lines[nn[i]].strip())
                t = entry["errtype"] if entry and entry["src"] == tgt_lines[i].strip() else "Misaligned"
                types[t] = types.get(t, 0) + 1
    return errors, dict(sorted(types.items()))


def compare(x, y, margin, mode, lines, errtypes=None):
    """xsimpp's result; asserts the exact-similarity loops agree and faiss differs only on near-ties.
    Returns (xsimpp errors, faiss-LASER errors, near-ties)."""
    k = 1 if margin == "absolute" else 4
    ours = xsim(x, y, margin=margin, k=4, mode=mode, tgt_text=lines, errtypes=errtypes)
    text = lines if mode == "text" else None
    exact_nn, exact_best = laser_loop(*exact_neighbours(x, y, k), margin, k)
    errors, types = count(exact_nn, text, errtypes)
    assert ours.errors == errors and (text is None or ours.error_types == types)
    assert np.array_equal(ours.nn, exact_nn)
    faiss_nn, _ = laser_loop(*faiss_neighbours(x, y, k), margin, k)
    # Where faiss chose differently, its choice must score (exactly) within float32 noise of ours.
    s = exact_similarity(x, y)
    cos_xy, idx_xy, cos_yx = exact_neighbours(x, y, max(k, 4))
    avg_x, avg_y = cos_xy[:, :k].mean(1), cos_yx[:, :k].mean(1)
    tol = 4 * gemm_error(x.shape[1], 1.0, 1.0)
    ties = 0
    for i in np.flatnonzero(faiss_nn != exact_nn):
        a, b = exact_nn[i], faiss_nn[i]
        if margin == "absolute":
            sa, sb = s[i, a], s[i, b]
        else:
            f = (lambda c, d: c / d) if margin == "ratio" else (lambda c, d: c - d)
            sa, sb = f(s[i, a], (avg_x[i] + avg_y[a]) / 2), f(s[i, b], (avg_x[i] + avg_y[b]) / 2)
        assert abs(sa - sb) <= tol, (i, a, b, sa, sb)
        ties += 1
    return ours.errors, count(faiss_nn, text, errtypes)[0], ties


@pytest.fixture(scope="module")
def chargram():
    return create_encoder("chargram")


@pytest.fixture(scope="module")
def flores_embeddings(chargram):
    root = shared_data_dir()
    if root is None:
        missing(f"real data not found ({DATA_HINT})", data=True)
    ds = Flores200("devtest", data_dir=root)
    eng = ds.sentences("eng_Latn")
    # xsim++ shape: the devtest English plus the dev English as extra (wrong) targets.
    extra = Flores200("dev", data_dir=root).sentences("eng_Latn")
    y = chargram.encode(eng + extra)
    xs = {lang: chargram.encode(ds.sentences(lang)) for lang in ("kea_Latn", "fur_Latn")}
    return xs, y, eng, extra


@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
@pytest.mark.parametrize("mode", ["text", "index"])
def test_flores_devtest_equals_reference(flores_embeddings, margin, mode):
    xs, y_big, eng, extra = flores_embeddings
    y = y_big[: len(eng)]
    total = 0
    for lang, x in xs.items():
        for yy, lines in ((y, eng), (y_big, eng + extra)):
            errtypes = {} if len(lines) > len(eng) else None
            ours, laser, ties = compare(x, yy, margin, mode, lines, errtypes)
            assert ours == laser and ties == 0, (lang, len(lines))
            total += ours
    assert total > 0  # the baseline does make errors: the comparison is not vacuous


@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
def test_demo_xsimpp_error_types_equal_reference(chargram, margin):
    ds = Demo()
    aug = load_augmented(ds.augmented_dirs()[0], "eng_Latn", "dev")
    eng = ds.sentences("eng")
    lines = eng + aug.lines
    y = chargram.encode(lines)
    ties = 0
    for lang in ("deu", "spa"):
        x = chargram.encode(ds.sentences(lang))
        ours, laser, t = compare(x, y, margin, "text", lines, aug.errtypes)
        assert ours > 0
        assert abs(ours - laser) <= t  # faiss-LASER differs by at most the near-ties it resolved by noise
        ties += t
    # Known case (absolute margin): deu line 80's gold ("... by 0.25 percent") and its number variant
    # ("... by 0.75 percent") have exactly equal similarity to the German sentence under chargram;
    # the exact tie goes to the gold line, faiss's float32 noise picks the variant.
    assert ties <= 1


@pytest.fixture(scope="module")
def flores_augmented(chargram):
    """xsim++ on real data: FLORES devtest English (first 200 lines) with hard negatives built by
    `xsimpp augment`'s generators (all three categories), and kea/fur sources."""
    from xsimpp.augment import resources
    from xsimpp.augment.core import build_augmented
    from xsimpp.errors import MissingResourceError

    root = shared_data_dir()
    if root is None:
        missing(f"real data not found ({DATA_HINT})", data=True)
    absent = resources.nltk_missing()
    if absent:
        missing(f"NLTK data {absent} not found: set NLTK_DATA (e.g. ../shared/nltk_data)", data=True)
    try:
        resources.load_spacy()
    except MissingResourceError as e:
        missing(f"spaCy English model not installed: {e}", data=True)
    ds = Flores200("devtest", data_dir=root)
    eng = ds.sentences("eng_Latn")[:200]
    aug = build_augmented(eng, max_per_category=10)
    errtypes = {v: {"src": s, "errtype": e} for v, s, e in zip(aug.variants, aug.src, aug.errtype)}
    lines = eng + aug.variants
    y = chargram.encode(lines)
    xs = {lang: chargram.encode(ds.sentences(lang)[:200]) for lang in ("kea_Latn", "fur_Latn")}
    return xs, y, lines, errtypes


@pytest.mark.parametrize("margin", ["ratio", "distance", "absolute"])
def test_flores_xsimpp_error_types_equal_reference(flores_augmented, margin):
    xs, y, lines, errtypes = flores_augmented
    seen_types = set()
    for lang, x in xs.items():
        ours, laser, ties = compare(x, y, margin, "text", lines, errtypes)
        # hashed character n-grams give a sentence and its number variant ("... 0.25 ..." vs
        # "... 0.75 ...") exactly equal similarities to a source that has neither: each such tie
        # is checked in compare(); the counts may differ by at most those
        assert abs(ours - laser) <= ties, lang
        seen_types |= set(xsim(x, y, margin=margin, k=4, tgt_text=lines, errtypes=errtypes).error_types)
    assert len(seen_types) >= 3  # the breakdown is exercised: Misaligned and augmented categories
