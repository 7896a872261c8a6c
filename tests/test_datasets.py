"""Dataset loading: layouts, strict reading, clear errors."""

import json
import re

import pytest

from xsimpp.datasets import (DATASETS, Dataset, Flores200, ParallelFiles, TatoebaChallenge, TatoebaV1, get_dataset,
                             load_augmented, pool_sources)
from xsimpp.datasets.bucc import Bucc2018
from xsimpp.datasets.demo import Demo
from xsimpp.datasets.languages import UnknownLanguageError
from xsimpp.errors import BadInputError, MissingResourceError
from xsimpp.textio import read_lines


def make_flores(root, layout="flores200_dataset", split="devtest", langs=("eng_Latn", "kea_Latn"), n=5):
    d = root / layout / split
    d.mkdir(parents=True)
    for lang in langs:
        (d / f"{lang}.{split}").write_text("".join(f"{lang} sentence {i}\n" for i in range(n)), encoding="utf-8")
    return d


@pytest.mark.parametrize("layout", ["flores200_dataset", "flores200"])
def test_flores_layouts_and_resolution(tmp_path, layout):
    make_flores(tmp_path, layout)
    ds = Flores200("devtest", data_dir=tmp_path)
    bt = ds.bitext("kea", "eng")
    assert (bt.src_lang, bt.tgt_lang, len(bt)) == ("kea_Latn", "eng_Latn", 5)
    assert bt.src[0] == "kea_Latn sentence 0"


def test_data_dir_env(tmp_path, monkeypatch):
    make_flores(tmp_path)
    monkeypatch.setenv("XSIMPP_DATA_DIR", str(tmp_path))
    assert Flores200("devtest").bitext("kea_Latn", "eng_Latn").checksum


def test_missing_dataset_says_where(tmp_path, monkeypatch):
    monkeypatch.delenv("XSIMPP_DATA_DIR", raising=False)
    with pytest.raises(MissingResourceError) as e:
        Flores200("devtest", data_dir=tmp_path / "nothing").bitext("kea", "eng")
    msg = str(e.value)
    assert "kea_Latn.devtest not found" in msg and "XSIMPP_DATA_DIR" in msg and str(tmp_path / "nothing") in msg


def test_mismatched_line_counts(tmp_path):
    d = make_flores(tmp_path)
    (d / "kea_Latn.devtest").write_text("one\ntwo\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="kea_Latn has 2 lines but eng_Latn has 5"):
        Flores200("devtest", data_dir=tmp_path).bitext("kea", "eng")


def test_strict_reading(tmp_path):
    p = tmp_path / "f.txt"
    p.write_bytes(b"ok\n\xff\xfe broken\n")
    with pytest.raises(BadInputError, match="line 2 is not valid UTF-8"):
        read_lines(p)
    p.write_text("a\n\nb\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="1 empty line"):
        read_lines(p)
    p.write_text("", encoding="utf-8")
    with pytest.raises(BadInputError, match="empty"):
        read_lines(p)
    p.write_bytes("\ufeffa\r\nb".encode())  # BOM, CRLF, no final newline
    assert read_lines(p) == ["a", "b"]


def test_unknown_dataset_and_split(tmp_path):
    with pytest.raises(MissingResourceError, match="Unknown dataset 'wmt'"):
        get_dataset("wmt")
    with pytest.raises(MissingResourceError, match="splits dev, devtest"):
        Flores200("test")


def test_parallel_files(tmp_path):
    (tmp_path / "a.txt").write_text("x\ny\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("X\nY\n", encoding="utf-8")
    bt = ParallelFiles(tmp_path / "a.txt", tmp_path / "b.txt").bitext()
    assert bt.src == ["x", "y"] and bt.tgt == ["X", "Y"]


def test_augmented_loading(tmp_path):
    (tmp_path / "eng_Latn_augmented.dev").write_text("a cat\n", encoding="utf-8")
    (tmp_path / "eng_Latn_errtype.dev.json").write_text(json.dumps({"a cat": {"src": "a dog", "errtype": "entity"}}))
    aug = load_augmented(tmp_path, "eng_Latn", "dev")
    assert aug.lines == ["a cat"] and aug.category_counts() == {"entity": 1}
    (tmp_path / "eng_Latn_errtype.dev.json").write_text("{broken")
    with pytest.raises(BadInputError, match="not valid UTF-8 JSON"):
        load_augmented(tmp_path, "eng_Latn", "dev")
    with pytest.raises(MissingResourceError, match="xsimpp augment"):
        load_augmented(tmp_path, "eng_Latn", "devtest")


def test_demo_corpus_is_consistent():
    ds = Demo()
    assert ds.languages() == ["deu_Latn", "eng_Latn", "fra_Latn", "spa_Latn"]
    eng = ds.sentences("eng")
    assert len(eng) >= 100 and len(set(eng)) == len(eng)
    for lang in ("deu", "fra", "spa"):
        assert len(ds.bitext(lang, "eng")) == len(eng)
    aug = load_augmented(ds.augmented_dirs()[0], "eng_Latn", "dev")
    assert set(aug.errtypes) == set(aug.lines)
    assert all(v["src"] in set(eng) for v in aug.errtypes.values())
    assert not set(aug.lines) & set(eng)
    assert set(aug.category_counts()) == {"causality", "entity", "number"}


def test_real_flores_and_tatoeba(real_data):
    bt = Flores200("devtest", data_dir=real_data).bitext("kea", "eng")
    assert len(bt) == 1012
    assert len(Flores200("dev", data_dir=real_data).bitext("fur", "eng")) == 997
    tat = TatoebaV1(data_dir=real_data)
    assert len(tat.languages()) == 112
    assert tat.bitext("fao", "eng").tgt_lang == "eng"


# ---------------------------------------------------------------------------------------------
# the Dataset contract (xsimpp/datasets/base.py)


def test_every_registered_dataset_declares_its_layout():
    for name, cls in DATASETS.items():
        assert issubclass(cls, Dataset) and cls.name == name
        assert cls.title and cls.description and cls.splits and cls.default_target and cls.download_hint
        assert cls().split == cls.splits[-1] == get_dataset(name).split
        with pytest.raises(MissingResourceError, match=f"^{re.escape(cls.title)} has .*, not 'nope'$"):
            cls("nope")


class Toy(Dataset):
    """What a new dataset looks like: a layout and a language list, nothing else."""

    name, title, description = "toy", "Toy", "two languages, two splits"
    splits = ("train", "test")
    default_target = "eng_Latn"
    folders = ("toy",)
    download_hint = "write it yourself"

    def holds_data(self, folder):
        return (folder / self.split).is_dir()

    def languages(self):
        return ["deu_Latn", "eng_Latn"]

    def file(self, code, partner=None):
        return self.root() / self.split / f"{code}.txt"


def test_a_new_dataset_is_one_small_subclass(tmp_path, monkeypatch):
    monkeypatch.delenv("XSIMPP_DATA_DIR", raising=False)
    d = tmp_path / "toy" / "test"
    d.mkdir(parents=True)
    (d / "deu_Latn.txt").write_text("Hund\nKatze\n", encoding="utf-8")
    (d / "eng_Latn.txt").write_text("dog\ncat\n", encoding="utf-8")
    ds = Toy(data_dir=tmp_path)
    assert ds.split == "test" and ds.is_available() and ds.root() == d.parent.resolve()
    bt = ds.bitext("de")  # default target, codes resolved
    assert (bt.dataset, bt.split, bt.src_lang, bt.tgt_lang, bt.src, bt.tgt) == (
        "toy", "test", "deu_Latn", "eng_Latn", ["Hund", "Katze"], ["dog", "cat"])
    assert bt.src_path == d.resolve() / "deu_Latn.txt" and ds.path("en") == d.resolve() / "eng_Latn.txt"
    assert ds.sentences("eng") == ["dog", "cat"]
    assert ds.augmented_dirs() == [d.parent.resolve() / "test_augmented"]
    with pytest.raises(UnknownLanguageError, match="Unknown language code 'fra'"):
        ds.bitext("fra")
    with pytest.raises(MissingResourceError, match="splits train, test, not 'dev'"):
        Toy("dev")
    train = Toy("train", data_dir=tmp_path)
    assert not train.is_available()
    with pytest.raises(MissingResourceError) as e:
        train.bitext("deu")
    msg = str(e.value)
    assert msg.startswith(f"Toy train data not found (looked under {tmp_path}, ") and msg.endswith("; write it yourself")


# ---------------------------------------------------------------------------------------------
# one clear sentence for each way data can be missing or wrong


def make_tatoeba(root, langs=("fao", "deu"), n=3):
    d = root / "tatoeba" / "v1"
    d.mkdir(parents=True)
    for xx in langs:
        (d / f"tatoeba.{xx}-eng.{xx}").write_text("".join(f"{xx} {i}\n" for i in range(n)), encoding="utf-8")
        (d / f"tatoeba.{xx}-eng.eng").write_text("".join(f"eng for {xx} {i}\n" for i in range(n)), encoding="utf-8")
    return d


def make_challenge(root, n=3):
    sets = root / "tatoeba-challenge" / "testsets"
    for folder, xx in (("eng-fra", "fra"), ("deu-eng", "deu")):
        (sets / folder).mkdir(parents=True)
        for lang in (xx, "eng"):
            (sets / folder / f"tatoeba-test-v2021-08-07.{lang}").write_text(
                "".join(f"{lang} {xx} {i}\n" for i in range(n)), encoding="utf-8")
    fur = root / "tatoeba-challenge" / "data-test-eng-fur"
    fur.mkdir()
    (fur / "test.txt").write_text("eng\tfur\tHello.\tMandi.\neng\tfur\tYes.\tSì.\n", encoding="utf-8")
    return sets


def make_bucc(root):
    d = root / "bucc2018"
    d.mkdir()
    (d / "zh-en.sample.zh").write_text("zh-1\t你好\nzh-2\t再见\n", encoding="utf-8")
    (d / "zh-en.sample.en").write_text("en-1\thello\nen-2\tbye\n", encoding="utf-8")
    (d / "zh-en.sample.gold").write_text("zh-1\ten-1\n", encoding="utf-8")
    return d


def test_tiny_tatoeba_and_challenge(tmp_path):
    make_tatoeba(tmp_path)
    tat = TatoebaV1(data_dir=tmp_path)
    assert tat.languages() == ["deu", "fao"]
    bt = tat.bitext("eng_Latn", "fo")
    assert (bt.src_lang, bt.tgt_lang, bt.src[0], bt.tgt[0]) == ("eng", "fao", "eng for fao 0", "fao 0")
    with pytest.raises(BadInputError, match="one English file per language"):
        tat.sentences("eng")
    make_challenge(tmp_path)
    ch = TatoebaChallenge(data_dir=tmp_path)
    assert ch.languages() == ["deu", "fra", "fur"] and ch.version("fra") == "v2021-08-07"
    fur = ch.bitext("eng", "fur")
    assert fur.src == ["Hello.", "Yes."] and fur.tgt == ["Mandi.", "Sì."] and ch.labels("fur") is None
    (tmp_path / "tatoeba-challenge" / "data-test-eng-fur" / "test.txt").write_text("eng\tfur\tHello.\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="line 1 is not 'eng<TAB>fur<TAB>English<TAB>Friulian'"):
        TatoebaChallenge(data_dir=tmp_path).bitext("fur")


@pytest.mark.parametrize("load, message", [
    (lambda d: Flores200("devtest", data_dir=d).bitext("kea", "eng"), "FLORES-200 devtest file kea_Latn.devtest not found"),
    (lambda d: TatoebaV1(data_dir=d).bitext("fao"), "Tatoeba v1 test data not found"),
    (lambda d: TatoebaChallenge(data_dir=d).bitext("fra"), "Tatoeba Challenge test data not found"),
    (lambda d: Bucc2018(d).load("zh-en", "sample"), "BUCC 2018 files not found"),
])
def test_missing_data_folder(tmp_path, monkeypatch, load, message):
    monkeypatch.delenv("XSIMPP_DATA_DIR", raising=False)
    with pytest.raises(MissingResourceError) as e:
        load(tmp_path / "nothing")
    msg = str(e.value)
    assert msg.startswith(message) and f"(looked under {tmp_path / 'nothing'}, " in msg and "XSIMPP_DATA_DIR" in msg
    assert msg.count(". ") == 0  # one sentence
    for cls in (Flores200, TatoebaV1, TatoebaChallenge):
        assert not cls(data_dir=tmp_path / "nothing").is_available()


def test_missing_demo_folder(tmp_path, monkeypatch):
    monkeypatch.setattr("xsimpp.datasets.demo.repo_data_dir", lambda: tmp_path)
    assert not Demo().is_available()
    with pytest.raises(MissingResourceError, match=r"^The demo corpus dev data not found \(looked under .*\); .*inside the xsimpp package"):
        Demo().bitext("deu")


def test_missing_language_file(tmp_path, monkeypatch):
    monkeypatch.delenv("XSIMPP_DATA_DIR", raising=False)  # FLORES would take the file from the real data
    make_flores(tmp_path, langs=("eng_Latn",))
    with pytest.raises(MissingResourceError, match=r"^FLORES-200 devtest file kea_Latn.devtest not found \(looked under"):
        Flores200("devtest", data_dir=tmp_path).bitext("kea", "eng")
    d = make_tatoeba(tmp_path)
    (d / "tatoeba.deu-eng.deu").unlink()
    with pytest.raises(MissingResourceError, match=r"File not found: .*tatoeba\.deu-eng\.deu$"):
        TatoebaV1(data_dir=tmp_path).bitext("deu")
    sets = make_challenge(tmp_path)
    (sets / "deu-eng" / "tatoeba-test-v2021-08-07.deu").unlink()  # an incomplete pair is not offered
    with pytest.raises(BadInputError, match="Unknown language code 'deu'"):
        TatoebaChallenge(data_dir=tmp_path).bitext("deu")
    b = make_bucc(tmp_path)
    (b / "zh-en.sample.en").unlink()
    with pytest.raises(MissingResourceError, match=r"^BUCC zh-en sample lacks zh-en\.sample\.en in "):
        Bucc2018(tmp_path).load("zh-en", "sample")


def test_unknown_split(tmp_path):
    for ds, split, message in [(Flores200, "test", "FLORES-200 has splits dev, devtest, not 'test'"),
                               (TatoebaV1, "dev", "Tatoeba v1 has only the 'test' split, not 'dev'"),
                               (TatoebaChallenge, "dev", "Tatoeba Challenge has only the 'test' split, not 'dev'"),
                               (Demo, "devtest", "The demo corpus has only the 'dev' split, not 'devtest'")]:
        with pytest.raises(MissingResourceError, match=f"^{message}$"):
            ds(split, data_dir=tmp_path)
    make_bucc(tmp_path)
    with pytest.raises(MissingResourceError, match=r"^BUCC zh-en has no 'test' split in .* \(splits here: sample\); "):
        Bucc2018(tmp_path).load("zh-en", "test")


def test_unknown_language_code(tmp_path):
    make_flores(tmp_path)
    make_tatoeba(tmp_path)
    make_challenge(tmp_path)
    for ds in (Flores200("devtest", data_dir=tmp_path), TatoebaV1(data_dir=tmp_path),
               TatoebaChallenge(data_dir=tmp_path), Demo()):
        with pytest.raises(BadInputError, match=r"^Unknown language code 'qqq'\."):
            ds.bitext("qqq")
    for ds in (TatoebaV1(data_dir=tmp_path), TatoebaChallenge(data_dir=tmp_path)):
        with pytest.raises(MissingResourceError, match="pairs every language with English only, not fra-deu|not fao-deu"):
            ds.bitext("fra" if ds.name != "tatoeba" else "fao", "deu")
    with pytest.raises(MissingResourceError, match="parallel files hold src and tgt, not 'deu'"):
        ParallelFiles(tmp_path / "a", tmp_path / "b").bitext("deu")
    make_bucc(tmp_path)
    with pytest.raises(BadInputError, match="a BUCC pair looks like 'zh-en'"):
        Bucc2018(tmp_path).load("zhen", "sample")
    with pytest.raises(MissingResourceError, match=r"^BUCC 2018 has no de-en files in .* \(pairs here: zh-en\); "):
        Bucc2018(tmp_path).load("de-en", "sample")


# ---------------------------------------------------------------------------------------------
# one registry: the distractor pool's sources, `xsimpp datasets` and the docs' table derive from DATASETS


def test_the_pool_sources_are_registered_splits_under_their_historic_names():
    """A source is a (dataset, split) the dataset declares; the names mining-f1 and study
    configurations sign and take have kept their meaning."""
    named = {source: (cls.name, split) for source, (cls, split) in pool_sources().items()}
    assert named == {"flores200-dev": ("flores200", "dev"), "ntrex128": ("ntrex", "test"),
                     "oldi-seed": ("oldi-seed", "train"), "tatoeba": ("tatoeba", "test"),
                     "tatoeba-challenge": ("tatoeba-challenge", "test")}
    assert all(split in DATASETS[name].splits for name, split in named.values())


def test_a_pool_source_name_is_claimed_once(monkeypatch):
    import xsimpp.datasets as registry

    class Copy(Flores200):
        name = "flores200-copy"

    monkeypatch.setattr(registry, "DATASETS", {**registry.DATASETS, Copy.name: Copy})
    with pytest.raises(ValueError, match="'flores200-dev' is declared by flores200 and flores200-copy"):
        pool_sources()


def make_ntrex_and_seed(root):
    (root / "ntrex128").mkdir()
    (root / "ntrex128" / "newstest2019-src.eng.txt").write_text("News one.\nNews two.\n", encoding="utf-8")
    (root / "ntrex128" / "newstest2019-ref.fra.txt").write_text("Nouvelle un.\nNouvelle deux.\n", encoding="utf-8")
    (root / "oldi-seed").mkdir()
    for code, text in (("eng_Latn", "Seed one.\nSeed  two.\n"), ("fur_Latn", "Semence une.\nSemence dôs.\n")):
        (root / "oldi-seed" / code).write_text(text, encoding="utf-8")
    (root / "oldi-seed" / "metadata.tsv").write_text("URL\nhttps://en.wikipedia.org/wiki/X\n", encoding="utf-8")


def test_each_pool_source_reads_its_datasets_own_layout(tmp_path):
    from xsimpp.datasets.pool import build_distractors, read_source

    make_flores(tmp_path, "flores200_dataset", "dev", ("eng_Latn", "fra_Latn"), 2)  # a layout --dataset reads
    make_tatoeba(tmp_path, ("fra", "deu"), 2)
    make_challenge(tmp_path, 2)
    make_ntrex_and_seed(tmp_path)
    roots = [tmp_path / "elsewhere", tmp_path]
    assert read_source("flores200-dev", roots) == ["eng_Latn sentence 0", "eng_Latn sentence 1"]
    assert read_source("ntrex128", roots, "fra_Latn") == ["Nouvelle un.", "Nouvelle deux."]
    assert read_source("oldi-seed", roots) == ["Seed one.", "Seed two."]  # normalised; metadata.tsv is no side
    assert read_source("oldi-seed", roots, "fra_Latn") is None  # there, but without a French side
    # English-pivot datasets: the English file of every language, in file order
    assert read_source("tatoeba", roots) == ["eng for deu 0", "eng for deu 1", "eng for fra 0", "eng for fra 1"]
    assert read_source("tatoeba", roots, "fra_Latn") == ["fra 0", "fra 1"]
    # the Challenge's eng-fur TSV is two columns of a line, not a side: never in the pool
    assert read_source("tatoeba-challenge", roots) == ["eng deu 0", "eng deu 1", "eng fra 0", "eng fra 1"]
    assert read_source("tatoeba-challenge", roots, "fur_Latn") is None
    pool = build_distractors(["oldi-seed"], ["ntrex128", "tatoeba"], 5, 0, {"News one."}, roots)
    assert pool.per_source["oldi-seed"] == 2 and len(pool.lines) == 5 and "News one." not in pool.lines
    with pytest.raises(MissingResourceError, match=r"^distractor source 'oldi-seed' \(OLDI Seed train\) is not under "
                                                   r"any data root \(.*elsewhere\); `xsimpp download` has no OLDI Seed"):
        read_source("oldi-seed", roots[:1])


def test_oldi_seed_is_a_registered_multiway_dataset(real_data):
    from xsimpp.datasets import OldiSeed
    from xsimpp.datasets.pool import normalise, read_source

    ds = get_dataset("oldi-seed", data_dir=real_data)
    assert isinstance(ds, OldiSeed) and ds.split == "train"
    assert ds.languages() == ["eng_Latn", "fur_Latn", "ita_Latn"]
    bt = ds.bitext("fur", "ita")  # multi-way: any target of the dataset
    assert (bt.src_lang, bt.tgt_lang, len(bt)) == ("fur_Latn", "ita_Latn", 6193)
    eng = [normalise(s) for s in ds.sentences("eng")]
    assert read_source("oldi-seed", [real_data]) == list(dict.fromkeys(s for s in eng if s))


def dataset_table() -> list[str]:
    """The docs' dataset table, rendered from the registry."""
    sources: dict[str, list[str]] = {}
    for source, (cls, split) in pool_sources().items():
        sources.setdefault(cls.name, []).append(f"`{source}` ({split})")
    return [f"| `{name}` | {', '.join(f'`{s}`' for s in cls.splits)} | `{cls.default_target}` | "
            f"{', '.join(sources.get(name, [])) or '—'} | {cls.description} |" for name, cls in DATASETS.items()]


def test_the_docs_dataset_table_is_the_registry():
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs" / "guides" / "datasets.md").read_text(encoding="utf-8")
    block = page.split("<!-- dataset table:")[1].split("<!-- end of dataset table -->")[0]
    rows = block.split("|---|---|---|---|---|")[1].strip().splitlines()
    assert rows == dataset_table(), "docs/guides/datasets.md: replace the table's rows with\n" + "\n".join(dataset_table())


def test_xsimpp_datasets_lists_the_registry(tmp_path, capsys):
    from xsimpp.cli import main

    make_ntrex_and_seed(tmp_path)
    assert main(["datasets", "--data-dir", str(tmp_path)]) == 0
    rows = {tuple(line.split()[:3]): line for line in capsys.readouterr().out.splitlines()}
    for name, cls in DATASETS.items():
        for split in cls.splits:
            assert (name, split, "found" if name in ("ntrex", "oldi-seed", "demo") else "missing") in rows
    assert " ntrex128 " in rows[("ntrex", "test", "found")] and " oldi-seed " in rows[("oldi-seed", "train", "found")]
