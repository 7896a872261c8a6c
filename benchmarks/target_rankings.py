"""Does the target language change which encoder xsim++ prefers? (issue 25) The study's encoders
(a preset's grid, shared forward passes and caches as `xsimpp study` runs them) scored by xsim and
xsim++ on FLORES-200 devtest into English and into another target; prints each encoder's mean
error over the source languages under both targets and the Kendall tau between the two rankings.

    XSIMPP_DATA_DIR=../shared/data NLTK_DATA=../shared/nltk_data \
        python benchmarks/target_rankings.py --preset small --target fra_Latn

The other target's negatives must have been built first (`xsimpp augment flores200 --lang L`);
`--augmented auto` finds them as `xsimpp eval` does. Source languages: the preset's, less the target.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import xsimpp  # noqa: E402
from xsimpp.datasets.languages import resolve_languages  # noqa: E402
from xsimpp.study.config import load_config  # noqa: E402
from xsimpp.study.encoders import as_encoder, build_encoders  # noqa: E402


def main() -> int:
    from scipy.stats import kendalltau

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", default="small")
    ap.add_argument("--target", default="fra_Latn")
    ap.add_argument("--split", default="devtest")
    ap.add_argument("--data-dir")
    args = ap.parse_args()

    cfg = load_config(preset=args.preset)
    target = resolve_languages(args.target)[0]
    langs = [c for c in resolve_languages(",".join(cfg.languages)) if c != target]
    notes: list[str] = []
    members = build_encoders(cfg.encoders, notes=notes)
    print(f"{len(members)} encoders x {len(langs)} languages ({','.join(langs)}); targets eng_Latn and {target}"
          + "".join(f"\nnote: {n}" for n in notes), flush=True)
    scores: dict[str, dict[str, float]] = {}
    t0 = time.perf_counter()
    for m in members:
        enc = as_encoder(m, lambda sentences, lang, m=m: m.vectors(sentences, lang))
        row = {}
        for tgt in ("eng_Latn", target):  # with negatives, one run gives both xsim and xsim++ rows
            f = xsimpp.evaluate(enc, langs, split=args.split, target=tgt, augmented="auto", data_dir=args.data_dir,
                                cache=False, progress=False).frame
            for metric in ("xsim", "xsim++"):
                row[f"{metric}->{tgt}"] = float(f.loc[f["metric"] == metric, "value"].mean())  # macro mean
        scores[m.label] = row
        print(f"{m.label:<18} " + "  ".join(f"{k} {v:6.2f}" for k, v in row.items())
              + f"   ({time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.1f})", flush=True)
    labels = list(scores)
    for metric in ("xsim", "xsim++"):
        a = [scores[label][f"{metric}->eng_Latn"] for label in labels]
        b = [scores[label][f"{metric}->{target}"] for label in labels]
        tau, p = kendalltau(a, b)
        print(f"{metric}: Kendall tau between the eng_Latn and {target} rankings of {len(labels)} encoders = "
              f"{tau:.3f} (p = {p:.3g}); ranking eng: {', '.join(sorted(labels, key=lambda x: scores[x][f'{metric}->eng_Latn']))}; "
              f"{target}: {', '.join(sorted(labels, key=lambda x: scores[x][f'{metric}->{target}']))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
