"""The engine gives exactly the error counts of a straightforward LASER-style implementation
(two faiss searches + explicit loops) on real embeddings: FLORES-200 devtest and the demo corpus."""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from xsimpp.datasets import Demo, Flores200, load_augmented
from xsimpp.encoders import create_encoder
from xsimpp.scoring import xsim


def reference_xsim(x, y, margin, k, tgt_lines=None, errtypes=None):
    """Independent re-statement of LASER's algorithm: faiss IndexFlatIP both ways, Python loops."""
    x, y = x.copy(), y.copy()
    faiss.normalize_L2(x)
    faiss.normalize_L2(y)
    index_x, index_y = faiss.IndexFlatIP(x.shape[1]), faiss.IndexFlatIP(y.shape[1])
    index_x.add(x)
    index_y.add(y)
    if margin == "absolute":
        nn = index_y.search(x, 1)[1][:, 0]
    else:
        cos_xy, idx_xy = index_y.search(x, k)
        cos_yx, _ = index_x.search(y, k)
        avg_x, avg_y = cos_xy.mean(axis=1), cos_yx.mean(axis=1)
        nn = np.empty(len(x), dtype=np.int64)
        for i in range(len(x)):
            scores = []
            for j in range(k):
                b = (avg_x[i] + avg_y[idx_xy[i, j]]) / 2
                scores.append(cos_xy[i, j] / b if margin == "ratio" else cos_xy[i, j] - b)
            nn[i] = idx_xy[i, int(np.argmax(scores))]
    if tgt_lines is None:
        return int((nn != np.arange(len(x))).sum()), {}
    errors, types = 0, {}
    for i in range(len(x)):
        if tgt_lines[nn[i]] != tgt_lines[i]:
            errors += 1
            if errtypes is not None:
                entry = errtypes.get(tgt_lines[nn[i]].strip())
                t = entry["errtype"] if entry and entry["src"] == tgt_lines[i].strip() else "Misaligned"
                types[t] = types.get(t, 0) + 1
    return errors, types


@pytest.fixture(scope="module")
def chargram():
    return create_encoder("chargram")


@pytest.fixture(scope="module")
def flores_embeddings(chargram):
    from conftest import shared_data_dir

    root = shared_data_dir()
    if root is None:
        pytest.skip("real data not found: set XSIMPP_DATA_DIR to the shared data folder (../shared/data)")
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
            ref_err, _ = reference_xsim(x, yy, margin, 4, lines if mode == "text" else None)
            ours = xsim(x, yy, margin=margin, k=4, mode=mode, tgt_text=lines, errtypes=errtypes)
            assert ours.errors == ref_err, (lang, len(lines))
            total += ref_err
    assert total > 0  # the baseline does make errors: the comparison is not vacuous


@pytest.mark.parametrize("margin", ["ratio", "absolute"])
def test_demo_xsimpp_error_types_equal_reference(chargram, margin):
    ds = Demo()
    aug = load_augmented(ds.augmented_dirs()[0], "eng_Latn", "dev")
    eng = ds.sentences("eng")
    lines = eng + aug.lines
    y = chargram.encode(lines)
    for lang in ("deu", "spa"):
        x = chargram.encode(ds.sentences(lang))
        ref_err, ref_types = reference_xsim(x, y, margin, 4, lines, aug.errtypes)
        ours = xsim(x, y, margin=margin, k=4, tgt_text=lines, errtypes=aug.errtypes)
        assert (ours.errors, ours.error_types) == (ref_err, dict(sorted(ref_types.items())))
        assert ref_err > 0 and sum(ref_types.values()) == ref_err
