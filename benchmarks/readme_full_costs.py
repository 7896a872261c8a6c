"""What each README line costs at full size, on this machine (issue 55).

tests/test_readme_lines.py runs the README's lines on small slices; this driver says what the lines
cost as written. For every `xsimpp` line of README.md and docs/getting-started.md that encodes or
trains, the size the command itself counts (the runner's ``Task.total``: each distinct sentence the
run looks up; the trainers' ``planned_steps`` over the pairs they keep), and the time predicted from
the encoding rate of the line's encoder measured here once, on a real slice, the way every run
measures it (``xsimpp.tasks.cost``: start-up to the first batch, then sentences per second). Then
ONE full line runs end to end on an empty cache, to set the prediction beside its real wall time.

    nice -n 19 python benchmarks/readme_full_costs.py [--rate-limit 300] [--full-line LINE]

Writes benchmarks/results/readme_full_costs.json; docs/performance.md prints its table
(``table_rows``; tests/test_readme_full_costs.py checks the docs against the file). The data comes
from $XSIMPP_DATA_DIR; each measurement runs in a fresh home of its own, so nothing is cached before.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import sys
import tempfile
import time
from pathlib import Path

import bounds
from machine import cpu_info, git_commit

from xsimpp.tasks.cost import duration

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("README.md", "docs/getting-started.md")
OUT = ROOT / "benchmarks" / "results" / "readme_full_costs.json"
SETUP_COMMANDS = {"augment"}  # run (in a line's page order) before the lines after them are counted
ENCODING_COMMANDS = {"eval", "tatoeba", "bucc", "mining-f1", "mteb-bitext"}
TRAINING_COMMANDS = {("train", "onealigner"), ("train", "distill")}
# The README's OneAligner line names the user's seed files; at full size they are the OLDI seed's.
SEED_FILES = {"seed/fur_Latn": "oldi-seed/fur_Latn", "seed/eng_Latn": "oldi-seed/eng_Latn"}
DEFAULT_FULL_LINE = "xsimpp eval --encoder e5-small --langs kea,fur,swh"


def page_lines(page: str) -> list[str]:
    """The `xsimpp ...` lines of the page's fenced bash blocks, comments cut, in order (as
    tests/test_readme_lines.py reads them)."""
    text = (ROOT / page).read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.DOTALL):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["xsimpp"]:
                lines.append(" ".join(words))
    return lines


def costly_lines(commands=ENCODING_COMMANDS) -> list[str]:
    """The pages' lines that encode or train (or run one of ``commands``), each once, in page order."""
    lines = [line for page in PAGES for line in page_lines(page)]
    return [line for line in dict.fromkeys(lines)
            if (argv := shlex.split(line)[1:])[0] in commands or tuple(argv[:2]) in TRAINING_COMMANDS]


def _args(argv: list[str]):
    from xsimpp.cli import build_parser

    return build_parser().parse_args(argv)


def _task_of(command: str):
    from xsimpp.tasks.registry import task

    return task({"eval": "xsim"}.get(command, command))


def encoding_size(argv: list[str]) -> dict:
    """The sentences a task line looks up, as its run counts them before the first forward pass."""
    from xsimpp.cli.knobs import given
    from xsimpp.tasks.runner import prepare

    args, task = _args(argv), _task_of(argv[0])
    data, settings, _ = prepare(task, spec=task.Source(**given(args, task.Source)),
                                settings=task.Settings.make(**given(args, task.Settings)))
    return {"encoder": args.encoder, "sentences": task.total(data, settings)}


def with_seed_files(argv: list[str], data_dir: Path) -> list[str]:
    return [str(data_dir / SEED_FILES[w]) if w in SEED_FILES else w for w in argv]


def training_size(argv: list[str], data_dir: Path) -> dict:
    """The examples a training line keeps and the steps it plans, as the command counts them."""
    args = _args(with_seed_files(argv, data_dir))
    if argv[1] == "distill":
        from xsimpp.cli.train import distill_pairs
        from xsimpp.datasets.languages import resolve_languages
        from xsimpp.training.distill import DistillConfig, planned_steps

        cfg = DistillConfig(batch_size=args.batch_size, steps=args.steps or 0, epochs=args.epochs,
                            english=not args.no_english)
        pairs, _ = distill_pairs(resolve_languages(args.langs), data_dir, args.oldi_seed, args.hold_out_dev)
        english = len({e for _, e in pairs})
        return {"model": args.student, "teacher": args.teacher, "teacher_sentences": english,
                "examples": len(pairs) + (english if cfg.english else 0), "batch_size": cfg.batch_size,
                "steps": planned_steps(cfg, pairs)}
    from xsimpp.cli.train import _read
    from xsimpp.datasets.heldout import evaluation_sentences
    from xsimpp.training.onealigner import TrainConfig, filter_pairs, load_base, planned_steps, token_counts

    cfg = TrainConfig(batch_size=args.batch_size, steps=args.steps, epochs=args.epochs)
    tokenizer = load_base(args.model)[1]
    kept, _ = filter_pairs(_read(args)[0], counts=lambda xs: token_counts(tokenizer, xs),
                           min_tokens=args.min_tokens, held_out=evaluation_sentences(data_dir))
    return {"model": args.model, "examples": len(kept), "batch_size": cfg.batch_size,
            "steps": planned_steps(cfg, len(kept)), "seed_files": sorted(SEED_FILES.values())}


@contextlib.contextmanager
def fresh_home():
    """A new, empty XSIMPP_HOME (cache, results, rates) for one measurement."""
    before = os.environ.get("XSIMPP_HOME")
    with tempfile.TemporaryDirectory(prefix="xsimpp-full-costs-") as home:
        os.environ["XSIMPP_HOME"] = home
        try:
            yield
        finally:
            if before is None:
                del os.environ["XSIMPP_HOME"]
            else:
                os.environ["XSIMPP_HOME"] = before


def run_line(argv: list[str]) -> float:
    """Wall seconds of one CLI run in this process (its output kept out of the driver's)."""
    from xsimpp.cli import main

    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    if code != 0:
        sys.exit(f"`xsimpp {shlex.join(argv)}` ended with exit {code}")
    return time.perf_counter() - t0


def measure_rate(encoder: str, limit: int) -> dict:
    """The encoding rate of ``encoder`` here: one `eval` of kea on ``limit`` FLORES lines (and their
    English) on an empty cache, read back from the rate the run records."""
    from xsimpp.encoders import create_encoder
    from xsimpp.tasks.cost import read_rate

    argv = ["eval", "--encoder", encoder, "--langs", "kea", "--limit", str(limit)]
    with fresh_home():
        load = os.getloadavg()[0]
        seconds = run_line(argv)
        rate = read_rate(create_encoder(encoder).id)
    if rate is None:
        sys.exit(f"`xsimpp {shlex.join(argv)}` encoded too little to measure a rate: raise --rate-limit")
    return {"ran": "xsimpp " + shlex.join(argv), "sentences": 2 * limit, "seconds": round(seconds, 1),
            "sentences_per_second": round(rate.sentences_per_second, 2),
            "startup_seconds": round(rate.startup_seconds, 1), "load": round(load, 2)}


def measure_training(argv: list[str], data_dir: Path, steps: int) -> dict:
    """Steps per second of a training line here: the line itself, cut to ``steps`` steps (and a
    checkpoint each step where it saves some), in an empty folder and home, read back from the rate
    the run records (``xsimpp.tasks.cost.record_training``, the optimizer steps only)."""
    from xsimpp.tasks.cost import rates_path, training_key

    words = with_seed_files(argv, data_dir)
    for flag, value in (("--steps", steps), ("--save-every", 1)):
        if flag in words:
            words[words.index(flag) + 1] = str(value)
        elif flag == "--steps":
            words += [flag, str(value)]
    args = _args(words)
    key = training_key(f"train {argv[1]}", args.student if argv[1] == "distill" else args.model, args.batch_size,
                       args.max_length, args.device)
    with fresh_home(), tempfile.TemporaryDirectory() as folder, contextlib.chdir(folder):
        load = os.getloadavg()[0]
        seconds = run_line(words + ["--no-progress"])
        row = json.loads(rates_path().read_text(encoding="utf-8")).get(key)
    if row is None:
        sys.exit(f"`xsimpp {shlex.join(words)}` trained too briefly to measure a rate: raise --training-steps")
    return {"ran": "xsimpp " + shlex.join(argv[:2] + words[2:]).replace(str(data_dir) + "/", "<data>/"),
            "seconds": round(seconds, 1), "steps_per_second": row["steps_per_second"], "load": round(load, 2)}


def predicted_seconds(rate: dict, sentences: int) -> float:
    """As ``xsimpp.tasks.cost.EncodeRate.seconds``: start-up, then the sentences at the rate."""
    from xsimpp.tasks.cost import EncodeRate

    return EncodeRate(rate["sentences_per_second"], rate["startup_seconds"], "").seconds(sentences)


def main(argv: list[str] | None = None) -> int:
    p = bounds.Parser(prog="readme_full_costs.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--rate-limit", type=bounds.flores_lines, default=300,
                   help="FLORES lines of kea (and as many English) encoded to measure each encoder's rate")
    p.add_argument("--training-steps", type=bounds.count(1, bounds.MAX_REPEATS), default=3,
                   help="optimizer steps each training line takes to measure its rate")
    p.add_argument("--full-line", default=DEFAULT_FULL_LINE, help="the one README line run end to end")
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    lines = costly_lines()
    if args.full_line not in lines:
        p.error(f"--full-line must be one of the pages' encoding lines, not {args.full_line!r}")
    from xsimpp.paths import data_dirs

    data = data_dirs()[0]  # $XSIMPP_DATA_DIR where set
    rows = {}
    with fresh_home():  # the pages' set-up lines (augment) run where the lines after them look
        for line in costly_lines(ENCODING_COMMANDS | SETUP_COMMANDS):
            words = shlex.split(line)[1:]
            if words[0] in SETUP_COMMANDS:
                run_line(words + ["--no-progress"])
                continue
            rows[line] = encoding_size(words) if words[0] in ENCODING_COMMANDS else training_size(words, data)
            print(line, rows[line], flush=True)
    encoders = sorted({row["encoder"] for row in rows.values() if "encoder" in row})
    rates = {}
    for encoder in encoders:
        rates[encoder] = measure_rate(encoder, args.rate_limit)
        print(encoder, rates[encoder], flush=True)
    for line, row in rows.items():
        if "encoder" in row:
            row["predicted_seconds"] = round(predicted_seconds(rates[row["encoder"]], row["sentences"]))
        else:
            row["training_rate"] = measure_training(shlex.split(line)[1:], data, args.training_steps)
            row["predicted_seconds"] = round(row["steps"] / row["training_rate"]["steps_per_second"])
            print(line, row["training_rate"], flush=True)
    full_argv = shlex.split(args.full_line)[1:]
    with fresh_home():
        load = os.getloadavg()[0]
        seconds = run_line(full_argv)
    full = {"line": args.full_line, "seconds": round(seconds), "load": round(load, 2),
            "predicted_seconds": rows[args.full_line]["predicted_seconds"]}
    print("full run", full, flush=True)
    result = {"machine": cpu_info(), "niceness": os.nice(0), "commit": git_commit(),
              "measured_by": "nice -n 19 python benchmarks/readme_full_costs.py", "rates": rates,
              "full_run": full, "lines": [{"line": line, **row} for line, row in rows.items()]}
    from xsimpp.textio import atomic_write_json

    atomic_write_json(args.out, result)
    print(f"wrote {args.out}")
    return 0


def summary(result: dict) -> list[str]:
    """The sentences docs/performance.md says the table was measured with: where, how, and the one
    full line's prediction beside its real wall time."""
    m = result["machine"]
    said = [f"predicted from {r['sentences']} sentences measured at {r['sentences_per_second']:g} sentences/s "
            f"({r['startup_seconds']:g} s start-up) on {m['cpu']}, {m['cores']} cores, load {r['load']:g} "
            f"(`{r['ran']}`, {encoder})" for encoder, r in result["rates"].items()]
    for row in result["lines"]:
        if "training_rate" in row:
            r = row["training_rate"]
            said.append(f"predicted from {r['steps_per_second']:g} steps/s measured at load {r['load']:g} "
                        f"(`{r['ran']}`)")
    full = result["full_run"]
    said.append(f"`{full['line']}` run end to end on an empty cache, in a fresh home, at load {full['load']:g}: "
                f"predicted {full['predicted_seconds']} s, took {full['seconds']} s")
    return said


def spaced(n: int) -> str:
    """12 911 as the docs write numbers."""
    return f"{n:,}".replace(",", " ")


def table_rows(result: dict) -> list[str]:
    """docs/performance.md's full-costs table, one row per line, from the committed measurement."""
    rows = []
    for row in result["lines"]:
        line = row["line"]
        if "sentences" in row:
            size = f"{spaced(row['sentences'])} sentences with {row['encoder']}"
        else:
            size = (f"{spaced(row['steps'])} steps of {row['batch_size']} over {spaced(row['examples'])} examples "
                    f"({row['model']})")
            if "teacher" in row:
                size += f"; the teacher ({row['teacher']}) encodes {row['teacher_sentences']} English sentences"
        if "sentences" in row:
            rate = result["rates"][row["encoder"]]
            how = f"{rate['sentences_per_second']:g} sentences/s, {rate['startup_seconds']:g} s start-up"
        else:
            how = f"{row['training_rate']['steps_per_second']:g} steps/s"
        rows.append(f"| `{line}` | {size} | about {duration(row['predicted_seconds'])} | {how} |")
    return rows


if __name__ == "__main__":
    sys.exit(main())
