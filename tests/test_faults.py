"""Faults around the input: output paths of the wrong kind, read-only places, a full disk, corrupt
state on disk. Each ends in exit 2 with one sentence (no traceback) and leaves no partial results.

Root reads and writes anything, so permission, read-only and full-disk errors are simulated with
monkeypatch at the one place files are written (``textio``) or opened.
"""

from __future__ import annotations

import errno
import json
import os

import numpy as np
import pytest
from faultkit import deny_read, fail_fsync_after, no_mkstemp, sqlite_full

from xsimpp.cli import main
from xsimpp.results import STORE_LOCK

DEMO = ["eval", "--encoder", "chargram", "--dataset", "demo", "--langs", "deu,fra", "--no-progress"]


def cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code, err, *fragments):
    """Exit 2, exactly one `xsimpp: error:` line naming every fragment, no traceback."""
    assert code == 2, err
    errors = [ln for ln in err.splitlines() if ln.startswith("xsimpp: error:")]
    assert len(errors) == 1, err
    assert "Traceback" not in err
    for f in fragments:
        assert f in errors[0], errors[0]
    return errors[0]


def results(home):
    return sorted((home / "results").glob("*.json")) if (home / "results").is_dir() else []


# -- 1. output paths of the wrong kind, checked before any work ---------------------------------------------------


def test_results_dir_that_is_a_file(capsys, tmp_path):
    f = tmp_path / "results"
    f.write_text("x")
    code, out, err = cli(capsys, *DEMO, "--results-dir", f)
    assert_one_line_error(code, err, "--results-dir", "not a directory")
    assert out == ""  # nothing printed that looks like success


def test_cache_dir_that_is_a_file(capsys, tmp_path):
    f = tmp_path / "cache"
    f.write_text("x")
    code, out, err = cli(capsys, *DEMO, "--cache-dir", f)
    assert_one_line_error(code, err, "--cache-dir", "not a directory")


def test_cache_dir_below_a_file(capsys, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    code, _, err = cli(capsys, *DEMO, "--cache-dir", f / "sub")
    assert_one_line_error(code, err, "--cache-dir", "is not a directory")


@pytest.mark.parametrize("flag", ["--csv", "--html"])
def test_leaderboard_output_is_a_directory(capsys, tmp_path, flag):
    assert cli(capsys, *DEMO)[0] == 0
    code, _, err = cli(capsys, "leaderboard", flag, tmp_path)
    assert_one_line_error(code, err, flag, "is a directory")


def test_plot_out_is_a_directory(capsys, tmp_path):
    assert cli(capsys, *DEMO, "--augmented", "auto")[0] == 0
    code, _, err = cli(capsys, "plot", "errors", "--encoder", "chargram", "--out", tmp_path)
    assert_one_line_error(code, err, "--out", "is a directory")


def test_mine_out_is_a_file(capsys, tmp_path):
    np.save(tmp_path / "x.npy", np.eye(4, dtype=np.float32))
    f = tmp_path / "out"
    f.write_text("x")
    code, _, err = cli(capsys, "mine", "--src-emb", tmp_path / "x.npy", "--tgt-emb", tmp_path / "x.npy", "--out", f,
                       "--k", "1", "--no-progress")
    assert_one_line_error(code, err, "--out", "not a directory")


def test_augment_out_is_a_file(capsys, tmp_path):
    src = tmp_path / "en.txt"
    src.write_text("The dog sleeps.\n")
    f = tmp_path / "out"
    f.write_text("x")
    code, _, err = cli(capsys, "augment", src, "--out", f, "--no-progress")
    assert_one_line_error(code, err, "--out", "not a directory")


@pytest.mark.parametrize("command", ["tatoeba", "rank"])
def test_dump_or_json_file_is_a_directory(capsys, tmp_path, command):
    if command == "tatoeba":
        argv = ["tatoeba", "--encoder", "chargram", "--langs", "deu", "--limit", "20", "--dump", tmp_path,
                "--no-progress"]
        flag = "--dump"
    else:
        argv = ["rank", str(tmp_path / "table.csv"), "--json", tmp_path]
        flag = "--json"
    code, _, err = cli(capsys, *argv)
    assert_one_line_error(code, err, flag, "is a directory")


# -- 2. OS errors while writing: one sentence naming path and cause; all records or none ---------------------------


def test_full_disk_mid_save_writes_no_record(capsys, monkeypatch, isolated_home):
    argv = [*DEMO, "--augmented", "auto", "--no-cache"]
    fail_fsync_after(monkeypatch, 2)  # the 3rd of the 4 records fails
    code, out, err = cli(capsys, *argv)
    assert_one_line_error(code, err, "the disk is full", str(isolated_home / "results"))
    assert out == ""
    assert results(isolated_home) == []
    # no temporary left behind (the store's lock file is not a result: it only serialises writers)
    assert not [p for p in (isolated_home / "results").iterdir() if p.name != STORE_LOCK]


def test_full_disk_keeps_the_previous_records(capsys, monkeypatch, isolated_home):
    argv = [*DEMO, "--no-cache"]
    assert cli(capsys, *argv)[0] == 0
    before = {p.name: p.read_bytes() for p in results(isolated_home)}
    fail_fsync_after(monkeypatch, 1)
    code, _, err = cli(capsys, *argv)
    assert_one_line_error(code, err, "the disk is full")
    assert {p.name: p.read_bytes() for p in results(isolated_home)} == before


@pytest.mark.parametrize("err,cause", [(errno.EROFS, "read-only"), (errno.EACCES, "permission denied")])
def test_read_only_or_forbidden_results_folder(capsys, monkeypatch, isolated_home, err, cause):
    no_mkstemp(monkeypatch, err)
    code, _, stderr = cli(capsys, *DEMO, "--no-cache")
    assert_one_line_error(code, stderr, cause)
    assert results(isolated_home) == []


def test_unwritable_output_folder_is_refused_before_work(capsys, monkeypatch, tmp_path):
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == str(tmp_path) else real(p, mode, **kw))
    code, out, err = cli(capsys, *DEMO, "--results-dir", tmp_path)
    assert_one_line_error(code, err, "--results-dir", "permission denied or read-only")
    assert out == ""


def test_unreadable_input_is_one_sentence(capsys, monkeypatch, tmp_path):
    src, tgt = tmp_path / "a.txt", tmp_path / "b.txt"
    src.write_text("a\nb\n")
    tgt.write_text("a\nb\n")
    deny_read(monkeypatch, src)
    code, _, err = cli(capsys, "eval", "--encoder", "chargram", "--src-file", src, "--tgt-file", tgt, "--no-progress")
    assert_one_line_error(code, err, str(src), "permission denied")


def test_stray_os_error_is_one_sentence(capsys, monkeypatch):
    """An OSError from a place that did not name itself still ends as one line with exit 2."""
    import xsimpp.cli.leaderboard as lb

    def boom(args):
        raise OSError(errno.EIO, "Input/output error", "/some/file")

    monkeypatch.setattr(lb, "run", boom)  # read by register() when main builds the parser
    code, _, err = cli(capsys, "leaderboard")
    assert_one_line_error(code, err, "/some/file", "input/output error")


# -- 4. results keyed by what makes them different --------------------------------------------------------------


def _files(tmp_path, name, src, tgt):
    d = tmp_path / name
    d.mkdir()
    (d / "s.txt").write_text("".join(x + "\n" for x in src))
    (d / "t.txt").write_text("".join(x + "\n" for x in tgt))
    return d / "s.txt", d / "t.txt"


def test_two_custom_corpora_keep_two_records(capsys, tmp_path, isolated_home):
    a = _files(tmp_path, "a", ["der Hund", "die Katze", "das Haus"], ["the dog", "the cat", "the house"])
    b = _files(tmp_path, "b", ["ein Baum", "ein Auto", "eine Tür"], ["a tree", "a car", "a door"])
    for s, t in (a, b):
        assert cli(capsys, "eval", "--encoder", "chargram", "--src-file", s, "--tgt-file", t, "--langs", "deu",
                   "--target", "eng", "--k", "1", "--no-progress")[0] == 0
    recs = [json.loads(p.read_text()) for p in results(isolated_home)]
    assert len(recs) == 2
    assert len({r["signature"]["data_checksum"] for r in recs}) == 2


def test_named_custom_corpus_replaced_with_a_warning(capsys, caplog, tmp_path, isolated_home):
    a = _files(tmp_path, "a", ["der Hund", "die Katze"], ["the dog", "the cat"])
    b = _files(tmp_path, "b", ["ein Baum", "ein Auto"], ["a tree", "a car"])
    for s, t in (a, b):
        assert cli(capsys, "eval", "--encoder", "chargram", "--src-file", s, "--tgt-file", t, "--langs", "deu",
                   "--target", "eng", "--name", "mycorpus", "--k", "1", "--no-progress")[0] == 0
    recs = [json.loads(p.read_text()) for p in results(isolated_home)]
    assert len(recs) == 1 and recs[0]["signature"]["dataset"] == "mycorpus"
    assert "measured on other data" in caplog.text


# -- 2b. the embedding cache: a full disk is not corruption; any corruption is salvaged ------------------------------


class _Toy:
    id = "toy"
    fingerprint = "f" * 16
    language_agnostic = True

    def __init__(self):
        self.seen = 0

    def encode(self, sentences, *, lang=None, progress=None):
        self.seen += len(sentences)
        rng = np.random.default_rng([len(s) for s in sentences] or [0])
        return np.array([np.r_[len(s), 1.0, rng.random(62)] for s in sentences], dtype=np.float32)


def _filled_cache(tmp_path, n=3000):
    from xsimpp.cache import EmbeddingCache, encode_cached

    enc = _Toy()
    sents = [f"sentence number {i}" for i in range(n)]
    with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as cache:
        encode_cached(enc, sents, cache=cache)
        path = cache.path
    return enc, sents, path


def test_garbage_in_the_middle_of_the_cache_is_salvaged(tmp_path, caplog):
    from xsimpp.cache import EmbeddingCache, encode_cached

    enc, sents, path = _filled_cache(tmp_path)
    size = path.stat().st_size
    with open(path, "r+b") as f:  # 64 KiB of garbage in the middle
        f.seek(size // 2)
        f.write(np.random.default_rng(0).bytes(65536))
    with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as cache:
        before = enc.seen
        v, n = encode_cached(enc, sents, cache=cache)
        assert 0 < n < len(sents) // 2  # most rows survived; the damaged ones were recomputed
        assert enc.seen - before == n
        assert cache.salvaged is not None and cache.salvaged > len(sents) // 2
    assert "rebuilt it with" in caplog.text
    with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as cache:  # healthy from now on
        assert encode_cached(enc, sents, cache=cache)[1] == 0
    assert not list(path.parent.glob("*.corrupt-*")) and not list(path.parent.glob("*.rebuild"))
    assert path.stat().st_size <= size * 1.1  # bounded: the rebuilt file replaces the damaged one


def test_damaged_cache_through_the_cli_runs_and_heals(capsys, tmp_path):
    cache_dir = tmp_path / "c"
    assert cli(capsys, *DEMO, "--cache-dir", cache_dir)[0] == 0
    path = next(cache_dir.rglob("*.sqlite"))
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.seek(size // 2)
        f.write(b"\xff" * min(65536, size // 4))
    code, out, err = cli(capsys, *DEMO, "--cache-dir", cache_dir)
    assert code == 0, err
    code, out, err = cli(capsys, *DEMO, "--cache-dir", cache_dir)
    assert code == 0 and "reused from cache: 360" in out


def test_full_disk_never_marks_a_healthy_cache_corrupt(tmp_path, monkeypatch):
    import sqlite3

    from xsimpp.cache import EmbeddingCache, encode_cached
    from xsimpp.errors import BadInputError

    enc, sents, path = _filled_cache(tmp_path, 50)
    before = path.read_bytes()
    sqlite_full(monkeypatch)
    with pytest.raises(BadInputError, match="the disk is full"):
        EmbeddingCache(enc.id, enc.fingerprint, tmp_path)
    monkeypatch.undo()
    assert path.read_bytes() == before and not list(path.parent.glob("*.corrupt-*"))

    class FullDb:  # the disk fills while new vectors are written
        def __init__(self, db):
            self.db = db

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def executemany(self, *a):
            raise sqlite3.OperationalError("database or disk is full")

        def __getattr__(self, name):
            return getattr(self.db, name)

    cache = EmbeddingCache(enc.id, enc.fingerprint, tmp_path)
    cache._db = FullDb(cache._db)
    with pytest.raises(BadInputError, match="the disk is full"):
        encode_cached(enc, ["a new sentence"], cache=cache)
    cache._db.db.close()
    assert not list(path.parent.glob("*.corrupt-*"))
    with EmbeddingCache(enc.id, enc.fingerprint, tmp_path) as again:
        assert len(again) == 50


def test_full_disk_cache_through_the_cli(capsys, tmp_path, monkeypatch):
    sqlite_full(monkeypatch)
    code, out, err = cli(capsys, *DEMO, "--cache-dir", tmp_path)
    assert_one_line_error(code, err, "the disk is full", "--no-cache")
    assert out == ""


# -- 3. mine: shards verified by checksum on reuse; no manifest before the inputs are checked -----------------------


def _mine_inputs(tmp_path, n=120, d=16, seed=0):
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal((n, d)).astype(np.float32), rng.standard_normal((n + 30, d)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", y)
    return x, y


def test_altered_shard_is_recomputed_not_trusted(tmp_path, caplog):
    from xsimpp.engine import EngineConfig
    from xsimpp.engine.mining import mine

    x, y = _mine_inputs(tmp_path)
    out = tmp_path / "run"
    ref = mine(tmp_path / "x.npy", tmp_path / "y.npy", out, config=EngineConfig(mining_shard_rows=40))
    shard = out / "shards" / "shard-00001.fwd_sim.npy"
    vals = np.load(shard)
    vals[:, 0] += 0.5  # a finished shard whose values were altered (the file stays a valid .npy)
    np.save(shard, vals)
    res = mine(tmp_path / "x.npy", tmp_path / "y.npy", out)
    assert (res.shards_reused, res.shards_computed) == (2, 1)
    assert np.array_equal(res.knn.fwd_score, ref.knn.fwd_score)
    assert "does not match its checksums" in caplog.text


def test_truncated_shard_is_recomputed(capsys, tmp_path):
    _mine_inputs(tmp_path)
    out = tmp_path / "run"
    argv = ["mine", "--src-emb", tmp_path / "x.npy", "--tgt-emb", tmp_path / "y.npy", "--out", out, "--no-progress"]
    assert cli(capsys, *argv)[0] == 0
    ref = np.load(out / "fwd_score.npy")
    shard = next((out / "shards").glob("*.bwd_idx.npy"))
    shard.write_bytes(shard.read_bytes()[:100])
    code, text, err = cli(capsys, *argv)
    assert code == 0, err
    assert "1 computed, 0 reused" in text
    assert np.array_equal(np.load(out / "fwd_score.npy"), ref)


def test_nan_row_leaves_no_manifest_to_block_the_fixed_run(capsys, tmp_path):
    x, _ = _mine_inputs(tmp_path)
    x[77, 3] = np.nan
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "run"
    argv = ["mine", "--src-emb", tmp_path / "x.npy", "--tgt-emb", tmp_path / "y.npy", "--out", out, "--no-progress"]
    code, _, err = cli(capsys, *argv)
    assert_one_line_error(code, err, "row 77", "NaN")
    assert not (out / "manifest.json").exists()
    x[77, 3] = 1.0
    np.save(tmp_path / "x.npy", x)
    assert cli(capsys, *argv)[0] == 0


def test_max_memory_zero_is_a_range_error(capsys, tmp_path):
    _mine_inputs(tmp_path)
    code, _, err = cli(capsys, "mine", "--src-emb", tmp_path / "x.npy", "--tgt-emb", tmp_path / "y.npy", "--out",
                       tmp_path / "o", "--max-memory", "0", "--no-progress")
    assert_one_line_error(code, err, "more than 0 bytes")


def test_garbled_manifest_is_not_a_traceback(capsys, tmp_path):
    _mine_inputs(tmp_path)
    out = tmp_path / "run"
    argv = ["mine", "--src-emb", tmp_path / "x.npy", "--tgt-emb", tmp_path / "y.npy", "--out", out, "--no-progress"]
    assert cli(capsys, *argv)[0] == 0
    (out / "manifest.json").write_text("{not json")
    code, text, err = cli(capsys, *argv)
    assert code == 0 and "0 computed, 1 reused" in text


# -- 5. encoder options and numeric flags checked against declared ranges; errtype JSON against its text ------------


@pytest.mark.parametrize("opts,fragment", [
    (["--encoder-opt", "n_features=0"], "option n_features takes an integer from 1 to"),
    (["--encoder-opt", "n_features=abc"], "option n_features takes an integer"),
    (["--encoder-opt", "ngram_min=5", "--encoder-opt", "ngram_max=2"], "ngram_min (5) must not be larger"),
    (["--batch-size", "0"], "option batch_size takes an integer >= 1, not 0"),
    (["--encoder-opt", "lowercase=maybe"], "option lowercase takes true or false"),
    (["--encoder-opt", "n_features=1.5"], "option n_features takes an integer"),
])
def test_bad_encoder_options(capsys, isolated_home, opts, fragment):
    code, out, err = cli(capsys, *DEMO, *opts)
    assert_one_line_error(code, err, fragment)
    assert results(isolated_home) == []


def test_option_declarations_cover_every_numeric_constructor_option():
    """Every built-in encoder's int/float options are declared (EncoderOptions or its own), one place."""
    import inspect

    from xsimpp.encoders import declared_options, registry

    for name, entry in registry().items():
        if entry.source != "built-in":
            continue
        cls = entry.load_class()
        declared = declared_options(cls)
        for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
            if isinstance(p.default, (int, float)) and not isinstance(p.default, bool) and p.name != "alpha":
                assert p.name in declared, (name, p.name)


def _aug_folder(tmp_path, lines, errtypes):
    d = tmp_path / "aug"
    d.mkdir(exist_ok=True)
    (d / "eng_Latn_augmented.dev").write_text("".join(x + "\n" for x in lines))
    (d / "eng_Latn_errtype.dev.json").write_text(json.dumps(errtypes) if not isinstance(errtypes, str)
                                                    else errtypes)
    return d


def _demo_eng():
    from xsimpp.datasets import get_dataset

    return get_dataset("demo").sentences("eng")


@pytest.mark.parametrize("case,fragment", [
    ("list", "expected a JSON object"),
    ("string_values", "is not {'src': text, 'errtype': text}"),
    ("partial", "describes only 1 of the 2 augmented lines"),
    ("unknown_type", "unknown error type(s) 'negation'"),
    ("other_corpus", "were made from sentences that are not in the eng_Latn target text"),
])
def test_bad_errtype_json_in_eval(capsys, tmp_path, isolated_home, case, fragment):
    eng = _demo_eng()
    v1, v2 = eng[0] + " Not.", eng[1] + " Never."
    good = {v1: {"src": eng[0], "errtype": "causality"}, v2: {"src": eng[1], "errtype": "entity"}}
    errtypes = {
        "list": [good],
        "string_values": {v1: "causality", v2: "entity"},
        "partial": {v1: good[v1]},
        "unknown_type": {**good, v2: {"src": eng[1], "errtype": "negation"}},
        "other_corpus": {**good, v2: {"src": "A sentence of some other corpus.", "errtype": "entity"}},
    }[case]
    d = _aug_folder(tmp_path, [v1, v2], errtypes)
    code, out, err = cli(capsys, *DEMO, "--augmented", d)
    assert_one_line_error(code, err, fragment)
    assert out == "" and results(isolated_home) == []


def test_allow_errtype_accepts_a_new_name(capsys, tmp_path):
    eng = _demo_eng()
    v1 = eng[0] + " Not."
    d = _aug_folder(tmp_path, [v1], {v1: {"src": eng[0], "errtype": "negation"}})
    code, out, err = cli(capsys, *DEMO, "--augmented", d, "--allow-errtype", "negation")
    assert code == 0, err


def test_bad_errtype_json_in_score(capsys, tmp_path):
    x = np.eye(3, dtype=np.float32) + 0.1
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", np.concatenate([x, x[:1] + 0.01]))
    (tmp_path / "t.txt").write_text("a\nb\nc\na!\n")
    (tmp_path / "e.json").write_text(json.dumps([1, 2]))
    code, _, err = cli(capsys, "score", "--src-emb", tmp_path / "x.npy", "--tgt-emb", tmp_path / "y.npy",
                       "--tgt-text", tmp_path / "t.txt", "--errtype-json", tmp_path / "e.json", "--k", "1")
    assert_one_line_error(code, err, "expected a JSON object")
    (tmp_path / "e.json").write_text(json.dumps({"a!": {"src": "a", "errtype": "number"}}))
    code, out, err = cli(capsys, "score", "--src-emb", tmp_path / "x.npy", "--tgt-emb", tmp_path / "y.npy",
                         "--tgt-text", tmp_path / "t.txt", "--errtype-json", tmp_path / "e.json", "--k", "1")
    assert code == 0, err


# -- 7. what a new user tripped over ----------------------------------------------------------------------------------


def test_listing_says_what_is_really_there(capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", "/nonexistent-hub-cache")
    code, out, _ = cli(capsys, "encoders")
    assert code == 0
    labse = next(ln for ln in out.splitlines() if ln.startswith("labse"))
    assert "ready" not in labse and "missing" in labse  # no weights here: not "ready"
    assert "huggingface-cli" not in out and "hf download" in out
    code, out, _ = cli(capsys, "datasets")
    assert code == 0 and "bucc2018" in out


def test_leaderboard_shows_no_nan_and_errtype_table_keeps_zero_columns(capsys):
    from xsimpp.tasks.tables import errtype_table

    table = errtype_table({"deu-eng": {"entity": 2, "Misaligned": 1}})
    header = table.splitlines()[1]
    assert [c.strip() for c in header.strip("|").split("|")] == ["src-tgt", "causality", "entity", "number",
                                                                  "misaligned"]
    assert cli(capsys, *DEMO)[0] == 0
    from xsimpp.results import ResultStore

    store = ResultStore()
    rec = store.load(store.records()[0])  # with its outcomes: the leaderboard checks values against them
    rec.signature.params.pop("mode")  # a metric without a mode, as BUCC's
    store.put(rec)
    code, out, _ = cli(capsys, "leaderboard")
    assert code == 0 and "nan" not in out


def test_augment_and_eval_default_to_the_same_split():
    from xsimpp.cli import build_parser

    p = build_parser()
    aug = p.parse_args(["augment", "flores200"])
    assert aug.split is None  # resolved in run(); the help says the default
    sub = next(a for a in p._subparsers._group_actions[0].choices["augment"]._actions if a.dest == "split")
    assert "default devtest" in sub.help
