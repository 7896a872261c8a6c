"""Reports: the self-contained HTML leaderboard (read back from a real headless browser after its
script ran) and the PNG charts."""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import matplotlib  # noqa: F401  hard dependency (the PNG charts): a broken install fails, never skips
import pytest
from conftest import missing

from xsimpp.cli import main
from xsimpp.results import ResultRecord, ResultStore, Signature

LANGS = ("deu_Latn", "fra_Latn", "spa_Latn")
# encoder -> (xsim per language, xsim++ per language, error types per language)
DATA = {
    "alpha": ((2.0, 5.0, 1.0), (20.0, 30.0, 10.0), ({"causality": 10, "entity": 5, "number": 3, "Misaligned": 2},
                                                     {"causality": 15, "entity": 10, "number": 5},
                                                     {"causality": 5, "number": 5})),
    "beta<b>": ((4.0, 3.0, 0.0), (40.0, 10.0, 25.0), ({"causality": 30, "Misaligned": 10},
                                                      {"entity": 10},
                                                      {"causality": 20, "entity": 5})),
}


def _store(root: Path) -> ResultStore:
    store = ResultStore(root)
    for enc, (xs, xpp, types) in DATA.items():
        for lang, v, vpp, t in zip(LANGS, xs, xpp, types):
            for metric, value, et in (("xsim", v, {}), ("xsim++", vpp, t)):
                sig = Signature(enc, "r1", "f" * 16, "demo", "dev", "c" * 64, metric,
                                {"margin": "ratio", "k": 4, "mode": "text"})
                store.put(ResultRecord(metric, value, 100, lang, "eng_Latn", sig, errors=int(value),
                                       error_types=et))
    return store


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _Tables(HTMLParser):
    """Collects every table by id: header keys and the text of each body row's cells."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, dict] = {}
        self.body_attrs: dict[str, str] = {}
        self._t = self._row = self._cell = None
        self._in_body = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body_attrs = a
        elif tag == "table":
            self._t = self.tables.setdefault(a.get("id", ""), {"keys": [], "rows": [], "attrs": a})
        elif tag == "tbody":
            self._in_body = True
        elif tag == "th" and self._t is not None:
            self._t["keys"].append(a.get("data-key"))
        elif tag == "tr" and self._in_body:
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._t["rows"].append(self._row)
            self._row = None
        elif tag == "tbody":
            self._in_body = False
        elif tag == "table":
            self._t = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def _parse(text: str) -> _Tables:
    p = _Tables()
    p.feed(text)
    return p


def test_html_is_self_contained_and_readable_without_js(tmp_path):
    _store(tmp_path / "results")
    out = tmp_path / "lb.html"
    assert main(["leaderboard", "--results-dir", str(tmp_path / "results"), "--html", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    # no external resource of any kind: opens from disk, offline, without a server
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text, re.I)
    assert "<script>" in text and "<style>" in text and "@import" not in text
    assert "beta&lt;b&gt;" in text and "beta<b>" not in text  # names are escaped
    tables = _parse(text).tables
    assert set(tables) == {"t-demo-dev-xsim-ratio-k4-text", "t-demo-dev-xsimpp-ratio-k4-text",
                           "t-demo-dev-xsimpp-ratio-k4-text-errtypes"}
    xs = tables["t-demo-dev-xsim-ratio-k4-text"]
    assert xs["keys"] == ["encoder", "deu_Latn-eng_Latn", "fra_Latn-eng_Latn", "spa_Latn-eng_Latn", "average"]
    # micro average = all errors / all sentences: alpha (2+5+1)/300, beta (4+3+0)/300
    assert xs["rows"] == [["alpha", "2.00", "5.00", "1.00", "2.67"], ["beta<b>", "4.00", "3.00", "0.00", "2.33"]]
    et = tables["t-demo-dev-xsimpp-ratio-k4-text-errtypes"]
    assert et["keys"][:7] == ["encoder", "pair", "causality", "entity", "number", "misaligned", "total"]
    assert et["rows"][0][:7] == ["alpha", "deu_Latn-eng_Latn", "10", "5", "3", "2", "20"]
    assert et["rows"][2][:7] == ["alpha", "spa_Latn-eng_Latn", "5", "0", "5", "0", "10"]  # absent type = 0


def _store_other_families(root: Path) -> None:
    """Tatoeba accuracies in text and index mode (n 100, 200, 300), BUCC under two threshold
    rules and MTEB's F1: metrics without a margin, of another direction and another average."""
    store = ResultStore(root)
    for enc, accs in (("alpha", (96.0, 88.0, 91.0)), ("beta", (90.0, 90.0, 90.0))):
        for mode in ("text", "index"):
            for lang, acc, n in zip(("deu", "fra", "swh"), accs, (100, 200, 300)):
                sig = Signature(enc, "r1", "f" * 16, "tatoeba", "test", "c" * 64, "tatoeba_acc_xx2en",
                                {"margin": "absolute", "k": 1, "mode": mode})
                store.put(ResultRecord("tatoeba_acc_xx2en", acc - (mode == "index"), n, lang, "eng", sig,
                                       errors=round(n * (100 - acc) / 100)))
        for rule, f1 in (("best-f1@sample", 80.0), ("cv5-seed0", 70.0)):
            sig = Signature(enc, "r1", "f" * 16, "bucc2018", "sample", "c" * 64, "bucc_f1",
                            {"protocol": "laser", "margin": "ratio", "k": 4, "threshold": rule, "subset": "all"})
            store.put(ResultRecord("bucc_f1", f1, 257, "zh", "en", sig))
        for lang, f1 in (("kea_Latn", 50.0), ("fur_Latn", 60.0)):
            sig = Signature(enc, "r1", "f" * 16, "flores200", "devtest", "c" * 64, "mteb_bitext_f1",
                            {"scoring": "cosine-top1"})
            store.put(ResultRecord("mteb_bitext_f1", f1, 1012, lang, "eng_Latn", sig))


def test_html_shows_every_metric_family_with_its_own_average_and_heading(tmp_path):
    _store_other_families(tmp_path / "results")
    out = tmp_path / "lb.html"
    assert main(["leaderboard", "--results-dir", str(tmp_path / "results"), "--html", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    tables = _parse(text).tables
    headings = re.findall(r"<h2[^>]*>([^<]*)</h2>", text)
    # every family has its table: BUCC once per threshold rule, MTEB's F1 without margin or k
    assert sum("bucc_f1" in h for h in headings) == 2 and any("mteb_bitext_f1" in h for h in headings)
    assert len([t for t in tables if "bucc_f1" in t]) == 2 and "t-flores200-devtest-mteb_bitext_f1" in tables
    # text and index mode: two headings that say which, k as an integer
    tat = [h for h in headings if "tatoeba_acc_xx2en" in h]
    assert len(tat) == 2 and any("mode text" in h for h in tat) and any("mode index" in h for h in tat)
    assert all("k 1" in h and "1.0" not in h and "higher is better" in h for h in tat)
    # an accuracy's average is the micro accuracy (n-weighted), never 100 minus it:
    # alpha (96*100 + 88*200 + 91*300) / 600 = 90.83
    rows = {r[0]: r for r in tables["t-tatoeba-test-tatoeba_acc_xx2en-absolute-k1-text"]["rows"]}
    assert rows["alpha"][-1] == "90.83" and rows["beta"][-1] == "90.00"
    # an F1's average is the plain mean over pairs
    rows = {r[0]: r for r in tables["t-flores200-devtest-mteb_bitext_f1"]["rows"]}
    assert rows["alpha"][-1] == "55.00"


def test_plot_xsim_with_two_scripts_of_one_language_and_mixed_settings(tmp_path):
    """zho_Hans and zho_Hant share a short label (zho-eng): both keep their full codes instead of a
    pandas 'duplicate labels' traceback; results under two settings of one metric are refused in
    one sentence naming the settings that differ."""
    from xsimpp.errors import BadInputError
    from xsimpp.report.plots import plot_xsim_vs_xsimpp
    from xsimpp.results import leaderboard_frame

    def rec(lang, margin="ratio", k=4, value=10.0):
        sig = Signature("enc", "r1", "f" * 16, "flores200", "devtest", "c" * 64, "xsim",
                        {"margin": margin, "k": k, "mode": "text"})
        return ResultRecord("xsim", value, 100, lang, "eng_Latn", sig, errors=int(value))

    records = [rec("zho_Hans"), rec("zho_Hant", value=12.0), rec("kea_Latn", value=3.0)]
    out = plot_xsim_vs_xsimpp(leaderboard_frame(records), None, tmp_path / "x.png")
    assert out.read_bytes()[:8] == PNG_MAGIC
    with pytest.raises(BadInputError, match=r"several settings \(k:1, k:4, margin:absolute, margin:ratio\)"):
        plot_xsim_vs_xsimpp(leaderboard_frame(records + [rec("fur_Latn", margin="absolute", k=1)]), None,
                            tmp_path / "y.png")


def _dump_dom(browser: str, url: str, tmp_path: Path) -> str:
    profile = tmp_path / "chromium-profile"  # a fresh profile: no state from other runs
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
           f"--user-data-dir={profile}", "--dump-dom", url]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout


def test_html_sorts_in_a_headless_browser(tmp_path):
    browser = _browser()
    if browser is None:
        # Not data: a system package that .ci/run installs with apt when it can. Where it cannot (no
        # root, no apt, no network) the machine, not xsimpp, is missing something, so this skips even
        # under XSIMPP_REQUIRE_DATA=1; .ci/run says so in its log and pytest -ra lists the reason.
        missing("no chromium in PATH (Debian: apt-get install -y chromium); the page's script is "
                "checked in a real browser only", data=False)
    _store(tmp_path / "results")
    out = tmp_path / "lb.html"
    assert main(["leaderboard", "--results-dir", str(tmp_path / "results"), "--html", str(out)]) == 0
    tid = "t-demo-dev-xsimpp-ratio-k4-text"

    # The URL asks the script to sort xsim++ by fra-eng, descending, on load.
    dom = _parse(_dump_dom(browser, f"{out.as_uri()}#sort={tid}:fra_Latn-eng_Latn:desc", tmp_path))
    assert dom.body_attrs.get("data-ready") == "1", "the page's script did not run to the end"
    t = dom.tables[tid]
    assert t["attrs"].get("data-sorted") == "fra_Latn-eng_Latn:desc"
    assert [r[0] for r in t["rows"]] == ["alpha", "beta<b>"]  # 30.00 before 10.00
    assert t["rows"][0] == ["alpha", "20.00", "30.00", "10.00", "20.00"]

    dom = _parse(_dump_dom(browser, f"{out.as_uri()}#sort={tid}:spa_Latn-eng_Latn:desc", tmp_path))
    assert [r[0] for r in dom.tables[tid]["rows"]] == ["beta<b>", "alpha"]  # 25.00 before 10.00

    # error-type table sorted by causality ascending: 5, 10, 15, 20, 30 and one 0 (beta fra)
    et = f"{tid}-errtypes"
    dom = _parse(_dump_dom(browser, f"{out.as_uri()}#sort={et}:causality:asc", tmp_path))
    assert [int(r[2]) for r in dom.tables[et]["rows"]] == [0, 5, 10, 15, 20, 30]
    # text column, descending
    dom = _parse(_dump_dom(browser, f"{out.as_uri()}#sort={tid}:encoder:desc", tmp_path))
    assert [r[0] for r in dom.tables[tid]["rows"]] == ["beta<b>", "alpha"]


def test_every_metric_family_sorts_in_a_headless_browser(tmp_path):
    """Each family's table (xsim, xsim++, Tatoeba text and index, BUCC per threshold rule, MTEB's F1,
    one with --ci intervals) sorted by its average in the browser: the script ran, the values are the
    page's own, the rows come in order of the average, and an interval under a number leaves its
    sort key alone."""
    browser = _browser()
    if browser is None:
        missing("no chromium in PATH (Debian: apt-get install -y chromium); the page's script is "
                "checked in a real browser only", data=False)
    _store(tmp_path / "results")
    _store_other_families(tmp_path / "results")
    store = ResultStore(tmp_path / "results")
    for enc, (lo, v, hi) in (("alpha", (3.0, 4.0, 5.5)), ("beta", (1.0, 2.0, 3.0))):
        sig = Signature(enc, "r1", "f" * 16, "flores200", "devtest", "c" * 64, "xsim",
                        {"margin": "ratio", "k": 4, "mode": "text", "ci": "bootstrap-percentile:0.95:1000:seed1"})
        store.put(ResultRecord("xsim", v, 1012, "kea_Latn", "eng_Latn", sig, errors=round(v * 10.12),
                               extra={"ci_low": lo, "ci_high": hi}))
    out = tmp_path / "lb.html"
    assert main(["leaderboard", "--results-dir", str(tmp_path / "results"), "--html", str(out)]) == 0
    static = _parse(out.read_text(encoding="utf-8")).tables
    metric_tables = [t for t in static if not t.endswith("-errtypes")]
    assert len(metric_tables) == 8  # xsim, xsim++, tatoeba x2 modes, bucc x2 rules, mteb, flores xsim with CI
    for tid in metric_tables:
        dom = _parse(_dump_dom(browser, f"{out.as_uri()}#sort={tid}:average:desc", tmp_path))
        assert dom.body_attrs.get("data-ready") == "1", tid
        t = dom.tables[tid]
        assert t["attrs"].get("data-sorted") == "average:desc", tid
        assert sorted(map(tuple, t["rows"])) == sorted(map(tuple, static[tid]["rows"])), tid  # same cells
        averages = [float(r[-1]) for r in t["rows"] if r[-1]]
        assert averages == sorted(averages, reverse=True), tid
    ci = next(t for t in metric_tables if t.startswith("t-flores200-devtest-xsim-"))
    rows = _parse(_dump_dom(browser, f"{out.as_uri()}#sort={ci}:kea_Latn-eng_Latn:asc", tmp_path)).tables[ci]["rows"]
    assert [r[0] for r in rows] == ["beta", "alpha"] and rows[0][1] == "2.00[1.00, 3.00]"


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_plots_are_written(tmp_path, capsys):
    _store(tmp_path / "results")
    rd = ["--results-dir", str(tmp_path / "results")]
    assert main(["plot", "errors", "--encoder", "alpha", "--out", str(tmp_path / "e.png")] + rd) == 0
    assert main(["plot", "xsim", "--encoders", "alpha,beta<b>", "--out", str(tmp_path / "x.png")] + rd) == 0
    sonar = Path(__file__).resolve().parent.parent / "xsimpp" / "data" / "examples" / "sonar_flores200_devtest.csv"
    assert main(["plot", "scatter", str(sonar), "--out", str(tmp_path / "s.png")]) == 0
    for name in ("e.png", "x.png", "s.png"):
        w, h = _png_size(tmp_path / name)
        assert w > 300 and h > 200 and (tmp_path / name).stat().st_size > 5000
    capsys.readouterr()
    assert main(["plot", "errors", "--encoder", "nobody", "--out", str(tmp_path / "n.png")] + rd) == 2
    assert "no stored result of nobody matches" in capsys.readouterr().err
    assert main(["plot", "scatter", "--from-results", "--bleu", str(sonar), "--out", str(tmp_path / "n.png")]
                + rd) == 2


def test_leaderboard_filters(tmp_path, capsys):
    _store(tmp_path / "results")
    _store_other_families(tmp_path / "results")
    rd = ["leaderboard", "--results-dir", str(tmp_path / "results")]
    assert main(rd + ["--metric", "xsim", "--encoder", "alpha", "--lang", "deu,fra_Latn"]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()[2:]]
    assert [(r[0], r[3], r[5]) for r in rows] == [("alpha", "deu_Latn", "xsim"), ("alpha", "fra_Latn", "xsim")]
    out = tmp_path / "lb.csv"
    assert main(rd + ["--dataset", "bucc2018", "--csv", str(out)]) == 0
    assert len(out.read_text(encoding="utf-8").splitlines()) == 1 + 4  # 2 encoders x 2 threshold rules
    capsys.readouterr()
    assert main(rd + ["--metric", "bleu"]) == 2
    err = capsys.readouterr().err
    assert "no stored result matches --metric bleu" in err and "xsim" in err and len(err.strip().splitlines()) == 1
