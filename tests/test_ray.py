"""The Ray backend (`--ray`): encoding chunks and mining shards as Ray tasks on a local instance
started here (2 workers, num_cpus=2), and on a two-node cluster joined by its address (the
multi-node recipe of docs/scaling.md), with results identical to the single-process run."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from xsimpp.cli import main

REPO = Path(__file__).resolve().parent.parent


def records(out: str) -> list[dict]:
    recs = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    for r in recs:
        r.pop("created")
    return recs


def test_without_ray_installed_one_sentence(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    code = main(["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu", "--no-progress", "--no-save",
                 "--ray", "auto"])
    err = capsys.readouterr().err
    assert code == 2 and "--ray needs Ray, which is not installed: pip install 'xsimpp[ray]'" in err
    assert "Traceback" not in err


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'xsimpp[ray]'; the test extra has it)")
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=150 * 2**20, log_to_driver=False,
             logging_level="error")
    try:
        yield ray
    finally:
        ray.shutdown()


def test_eval_on_ray_equals_single_process(ray_local, capsys, tmp_path):
    from xsimpp.cache import EmbeddingCache, sentence_key
    from xsimpp.datasets import Demo
    from xsimpp.encoders import create_encoder

    base = ["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,fra,spa", "--augmented", "auto",
            "--both-directions", "--no-progress", "--json"]
    outs = {}
    for name, extra in (("single", []), ("ray", ["--ray", "auto"])):
        assert main([*base, "--cache-dir", str(tmp_path / name), "--results-dir", str(tmp_path / f"res-{name}"),
                     *extra]) == 0
        outs[name] = capsys.readouterr().out
    assert records(outs["ray"]) == records(outs["single"]) and len(records(outs["single"])) == 9
    # The same cache: every sentence's vector, byte for byte.
    enc = create_encoder("chargram")
    d = Demo()
    sents = [s for lang in ("deu", "fra", "spa", "eng") for s in d.sentences(lang)]
    keys = [sentence_key(s) for s in sents]
    a = EmbeddingCache(enc.id, enc.fingerprint, tmp_path / "single").get_many(keys, "")
    b = EmbeddingCache(enc.id, enc.fingerprint, tmp_path / "ray").get_many(keys, "")
    assert a.keys() == b.keys() == set(keys) and all(np.array_equal(a[k], b[k]) for k in keys)
    # The same counts in the text footer, cold and then warm.
    text = ["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,fra", "--no-progress", "--no-save"]
    for name, extra in (("single", []), ("ray", ["--ray", "auto"])):
        assert main([*text, "--cache-dir", str(tmp_path / f"t-{name}"), *extra]) == 0
        outs[name] = capsys.readouterr().out
    assert outs["ray"] == outs["single"] and "sentences encoded: 360, reused from cache: 0" in outs["ray"]
    assert main([*text, "--cache-dir", str(tmp_path / "t-ray"), "--ray", "auto"]) == 0
    assert "sentences encoded: 0, reused from cache: 360" in capsys.readouterr().out


def test_mine_on_ray_byte_identical_and_resumes(ray_local, tmp_path, capsys):
    from xsimpp.api import mine

    rng = np.random.default_rng(7)
    x = rng.standard_normal((700, 32)).astype(np.float32)
    y = np.concatenate([x[:400] + 0.3 * rng.standard_normal((400, 32)).astype(np.float32),
                        rng.standard_normal((500, 32)).astype(np.float32)])
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    src, tgt = str(tmp_path / "x.npy"), str(tmp_path / "y.npy")
    single = mine(src, tgt, tmp_path / "single", shard_rows=100, tile_cols=256)
    # Interrupted after 3 shards (single process), finished on Ray: the manifest and markers carry over.
    assert mine(src, tgt, tmp_path / "ray", shard_rows=100, tile_cols=256, max_shards=3) is None
    done = mine(src, tgt, tmp_path / "ray", shard_rows=100, tile_cols=256, ray="auto")
    assert (single.shards_computed, done.shards_computed, done.shards_reused) == (7, 4, 3)
    names = ["fwd_idx", "fwd_score", "fwd_sim", "bwd_idx", "bwd_score", "bwd_sim"]
    for n in names:
        assert (tmp_path / "ray" / f"{n}.npy").read_bytes() == (tmp_path / "single" / f"{n}.npy").read_bytes()
    # The CLI flag, from scratch.
    assert main(["mine", "--src-emb", src, "--tgt-emb", tgt, "--out", str(tmp_path / "cli"), "--max-memory", "64MB",
                 "--no-progress", "--ray", "auto"]) == 0
    assert "computed, 0 reused" in capsys.readouterr().out
    for n in names:
        assert (tmp_path / "cli" / f"{n}.npy").read_bytes() == (tmp_path / "single" / f"{n}.npy").read_bytes()


def test_ray_needs_an_encoder_name(ray_local):
    from xsimpp.api import evaluate
    from xsimpp.errors import BadInputError

    class Upper:
        def encode(self, sentences):
            return np.array([[len(s), s.count("e") + 1.0] for s in sentences], dtype=np.float32)

    with pytest.raises(BadInputError, match="--ray needs a registered encoder name"):
        evaluate(Upper(), "deu", dataset="demo", revision="v1", ray="auto", k=2)


CLUSTER_SCRIPT = textwrap.dedent("""
    import json, sys
    from ray.cluster_utils import Cluster
    from xsimpp.cli import main

    # Two nodes of one CPU each: a head and a worker node, as `ray start --head` and
    # `ray start --address HEAD:PORT` make them on two machines.
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False,
                                                            "object_store_memory": 100 * 2**20})
    cluster.add_node(num_cpus=1, object_store_memory=100 * 2**20)
    try:
        code = main(sys.argv[1:] + ["--ray", cluster.address])
    finally:
        cluster.shutdown()
    sys.exit(code)
""")


def test_two_node_cluster_by_address(ray_local, tmp_path, capsys):
    """The multi-node recipe: xsimpp joins a running cluster by its address (here two nodes on
    this machine, started by a subprocess so this process's own Ray instance is not involved)."""
    args = ["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,spa", "--no-progress", "--no-save",
            "--json", "--no-cache"]
    proc = subprocess.run([sys.executable, "-c", CLUSTER_SCRIPT, *args], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert main(args) == 0
    assert records(proc.stdout) == records(capsys.readouterr().out)
