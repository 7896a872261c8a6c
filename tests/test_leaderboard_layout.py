"""The HTML leaderboard's wide tables on a 1400-px screen (issue 55: 8-pair tables ran off the
screen and hid the average). Rendered in a real headless chromium at 1400 px: the page itself never
scrolls sideways, a wide table scrolls in its own box, and its average column stays in view (sticky
at the box's right edge) beside the encoder column, before and after the box is scrolled."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import missing
from test_report import _browser, _parse

from xsimpp.cli import main
from xsimpp.results import ResultRecord, ResultStore, Signature

SCREEN_WIDTH = 1400
# 14 FLORES-200 languages into English: wider than any screen's share of the page (8 pairs already were)
LANGS = ("ace_Arab", "ace_Latn", "acm_Arab", "acq_Arab", "aeb_Arab", "afr_Latn", "ajp_Arab", "aka_Latn",
         "als_Latn", "amh_Ethi", "apc_Arab", "arb_Arab", "ars_Arab", "ary_Arab")
ENCODERS = ("sbert:sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2", "e5-small")

# Measured in the page after its own script: written onto <body> so that --dump-dom carries it out.
MEASURE = """<script>
(function(){
 var t=document.querySelector('table.sortable'),vw=window.innerWidth;
 function m(){var th=t.tHead.rows[0].cells,avg=th[th.length-1].getBoundingClientRect(),
   first=th[0].getBoundingClientRect(),box=t.getBoundingClientRect();
  return [Math.round(avg.left),Math.round(avg.right),Math.round(first.right),Math.round(box.right)].join(',');}
 var b=document.body;
 b.setAttribute('data-viewport',vw);
 b.setAttribute('data-page-width',document.documentElement.scrollWidth);
 b.setAttribute('data-table-scroll',t.scrollWidth+','+t.clientWidth);
 b.setAttribute('data-avg-key',t.tHead.rows[0].cells[t.tHead.rows[0].cells.length-1].getAttribute('data-key'));
 b.setAttribute('data-before',m());
 t.scrollLeft=t.scrollWidth;b.setAttribute('data-scrolled-end',m());
 t.scrollLeft=Math.round(t.scrollWidth/3);b.setAttribute('data-scrolled-mid',m());
})();
</script>"""


def _wide_store(root: Path) -> None:
    store = ResultStore(root)
    for e, enc in enumerate(ENCODERS):
        for i, lang in enumerate(LANGS):
            sig = Signature(enc, "r1", "f" * 16, "flores200", "devtest", "c" * 64, "xsim",
                            {"margin": "ratio", "k": 4, "mode": "text"})
            value = 10.0 + i + 3 * e
            store.put(ResultRecord("xsim", value, 1012, lang, "eng_Latn", sig, errors=round(value * 10.12)))


def _measure(browser: str, page: Path, tmp_path: Path) -> dict:
    profile = tmp_path / "chromium-profile"  # a fresh profile: no state from other runs
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
           "--hide-scrollbars", f"--window-size={SCREEN_WIDTH},900", f"--user-data-dir={profile}", "--dump-dom",
           page.as_uri()]
    res = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    return _parse(res.stdout).body_attrs


def test_a_wide_table_keeps_its_average_in_view_on_a_1400px_screen(tmp_path):
    browser = _browser()
    if browser is None:
        missing("no chromium in PATH (Debian: apt-get install -y chromium); the page's layout is "
                "checked in a real browser only", data=False)
    _wide_store(tmp_path / "results")
    out = tmp_path / "lb.html"
    assert main(["leaderboard", "--results-dir", str(tmp_path / "results"), "--html", str(out)]) == 0
    page = tmp_path / "measured.html"
    page.write_text(out.read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    body = _measure(browser, page, tmp_path)
    assert body.get("data-ready") == "1", "the page's own script did not run to the end"
    assert int(body["data-viewport"]) == SCREEN_WIDTH
    assert body["data-avg-key"] == "average"
    # the page never scrolls sideways; the table does, in its own box
    assert int(body["data-page-width"]) <= SCREEN_WIDTH, body
    scroll_width, client_width = map(int, body["data-table-scroll"].split(","))
    assert scroll_width > client_width, "the fixture's table is not wider than the screen: it tests nothing"
    for state in ("data-before", "data-scrolled-mid", "data-scrolled-end"):
        avg_left, avg_right, first_right, box_right = map(int, body[state].split(","))
        assert avg_right <= min(box_right, SCREEN_WIDTH), (state, body[state])  # the whole average cell shows
        assert avg_left >= first_right, (state, body[state])  # and the encoder column does not cover it
