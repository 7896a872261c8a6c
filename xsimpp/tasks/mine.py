"""`xsimpp mine` / ``xsimpp.mine``: exact margin kNN both ways over two embedding sets, sharded
and resumable on disk (``engine.mining``), and optionally the mined pairs as LASER's
``mine_bitexts --mode mine`` writes them.

A task without an encoder: it reads precomputed embeddings and writes arrays, not records. Its
knobs are declared here once, as every task's are: ``MineSource`` (the embeddings, the sentences
and where the outputs go) and ``MineSettings`` (the margin, the selection of pairs, and the
layout, which changes only the speed and memory); the API's keywords and the CLI's flags derive
from them. The runner runs it as every task (knobs split and type-checked, settings built, every
input read and checked before any mining work, then ``evaluate``), with no encoder
(``encodes = False``). Of the run options it takes ``progress`` (True: a shard counter on
stderr, or a callable(done, total)), ``engine`` (an ``EngineConfig``) and ``ray``.
"""

from __future__ import annotations

import dataclasses
import sys
from dataclasses import dataclass
from typing import Any, Callable

from ..engine import DEFAULT_MARGIN, MARGINS, EngineConfig
from ..engine.knn import MAX_MINING_LAYOUT
from ..engine.mining import MiningResult, RowSource, mine as mine_shards, result_paths
from ..errors import BadInputError
from ..paths import cache_dir, results_dir
from ..scoring.bucc import RETRIEVALS, check_selection, pairs_tsv, select_pairs
from ..textio import (atomic_write_text, check_output_dir, check_output_file, check_paths_apart, finite, path,
                      read_lines)
from .base import MAX_K, Settings, Task, TaskReport, check_margin_k, knob
from .runner import RunContext, RunOptions

_LAYOUT = ("changes only the speed and the memory the run takes: the results are identical for every layout "
           "(engine.mining), and a resumed run keeps its first layout (the manifest's plan)")


@dataclass(frozen=True)
class MineSource:
    """The two embedding sets (.npy files or arrays), their sentences (for the pairs TSV) and the
    outputs."""

    src: Any = knob(None, "source embeddings (.npy, float, sentences x dim)", flag="--src-emb", type=path)
    tgt: Any = knob(None, "target embeddings (.npy)", flag="--tgt-emb", type=path)
    out_dir: Any = knob(None, "folder for shards and results (fwd_idx.npy, fwd_score.npy, ...)", flag="--out",
                        type=path)
    pairs_tsv: Any = knob(None, "also write the mined pairs as LASER's mine_bitexts does: score<TAB>source<TAB>target, "
                                "best first (needs --src-text and --tgt-text)", type=path)
    src_text: Any = knob(None, "source sentences, one per row of --src-emb (for --pairs-tsv)", type=path)
    tgt_text: Any = knob(None, "target sentences, one per row of --tgt-emb (for --pairs-tsv)", type=path)


@dataclass(frozen=True)
class MineSettings(Settings):
    """The margin and the pairs kept (they change the outputs), and the layout (it does not)."""

    margin: str = knob(DEFAULT_MARGIN, "margin scoring", choices=MARGINS)
    k: int = knob(4, "neighbours for the margin", type=int, min=1, max=MAX_K)
    retrieval: str = knob("max", "which pairs --pairs-tsv keeps, as LASER's --retrieval: max (forward and backward "
                                 "bests, one-to-one, best first), fwd, bwd or intersect", choices=RETRIEVALS)
    threshold: float = knob(0.0, "--pairs-tsv keeps pairs scoring above this margin (as LASER)", type=finite)
    max_memory: int | str = knob("4GB", "bound on the engine's arrays, e.g. 4GB, 512MB", unsigned=_LAYOUT)
    shard_rows: int | None = knob(None, "source rows a shard (default: the most that fit --max-memory)", type=int,
                                  unsigned=_LAYOUT)
    tile_cols: int | None = knob(None, "target rows a tile (default: the most that fit --max-memory)", type=int,
                                 unsigned=_LAYOUT)
    max_shards: int | None = knob(None, "compute at most this many new shards, then return None (time-boxed jobs; "
                                        "a rerun resumes)", cli=False, unsigned=_LAYOUT)
    keep_shards: bool = knob(True, "keep the shard files once the result is written (the CLI: --delete-shards)",
                             cli=False, unsigned=_LAYOUT)

    def __post_init__(self) -> None:
        check_margin_k(self.margin, self.k)
        check_selection(self.retrieval, self.threshold)
        for name in ("shard_rows", "tile_cols", "max_shards"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise BadInputError(f"--{name.replace('_', '-')} must be a positive integer, got {value!r}")
            if name != "max_shards" and value is not None and value > MAX_MINING_LAYOUT:  # named as the user typed it
                raise BadInputError(f"--{name.replace('_', '-')} must be at most {MAX_MINING_LAYOUT} (2^40), got {value}")

    def engine(self, config: EngineConfig | None) -> EngineConfig:
        """``config`` with this run's layout (``EngineConfig.mining_*``); the layout given twice,
        differently, is refused."""
        cfg = config or EngineConfig()
        layout = {"mining_shard_rows": self.shard_rows, "mining_tile_cols": self.tile_cols}
        for field, value in layout.items():
            held = getattr(cfg, field)
            if value is not None and held is not None and held != value:
                raise BadInputError(f"the engine's {field} is {held} but the run asks for {value}; give it once")
        return dataclasses.replace(cfg, **{f: v for f, v in layout.items() if v is not None})


@dataclass
class MineData:
    source: MineSource
    texts: tuple[list[str], list[str]] | None  # the sentences of both sides, when --pairs-tsv asks for them


@dataclass
class MineReport(TaskReport):
    """The mining result (None: ``max_shards`` left work for a rerun) and what the summary names."""

    result: MiningResult | None
    source: MineSource
    settings: MineSettings
    n_pairs: int | None = None  # pairs written to --pairs-tsv


# Run options that belong to encoding and storing records: mine has neither.
_ENCODER_RUN_OPTIONS = ("cache", "save", "options", "revision", "encoder_name", "encode_kwargs", "label")


class MineTask(Task):
    """Mining at scale: no encoder, no records (its outputs are the arrays and the pairs TSV)."""

    name = "mine"
    encodes = False
    description = "margin kNN both ways over large .npy embedding sets (sharded, resumable)"
    metrics: dict = {}
    Source = MineSource
    Settings = MineSettings

    def load(self, source: MineSource, settings: MineSettings) -> MineData:
        """Every input and output checked before any mining work (the embeddings' rows are read
        and checked by the engine before it writes anything)."""
        for name, flag in (("src", "--src-emb"), ("tgt", "--tgt-emb"), ("out_dir", "--out")):
            if getattr(source, name) is None:
                raise BadInputError(f"give {flag}")
        check_output_dir(source.out_dir, "--out")
        inputs = {"--src-emb": source.src, "--tgt-emb": source.tgt, "--src-text": source.src_text,
                  "--tgt-text": source.tgt_text}
        # mine keeps no records, but its manifest.json in the results store would read as a broken one
        check_paths_apart(inputs=inputs, files={"--pairs-tsv": source.pairs_tsv}, folders={"--out": source.out_dir},
                          stores={"the results store": results_dir(), "the embedding cache": cache_dir()})
        # an input kept in --out under a result's name (fwd_idx.npy) would be replaced by that result
        check_paths_apart(inputs=inputs, files={"--out": result_paths(source.out_dir)})
        wanted = (source.pairs_tsv, source.src_text, source.tgt_text)
        if all(w is None for w in wanted):
            return MineData(source, None)
        if any(w is None for w in wanted):
            raise BadInputError("writing mined pairs needs all three of pairs_tsv, src_text and tgt_text "
                                "(--pairs-tsv, --src-text, --tgt-text)")
        check_output_file(source.pairs_tsv, "--pairs-tsv")
        return MineData(source, (_sentences(source.src_text, RowSource(source.src, "source embeddings")),
                                 _sentences(source.tgt_text, RowSource(source.tgt, "target embeddings"))))

    def evaluate(self, encoder, data: MineData, settings: MineSettings, ctx: RunContext) -> MineReport:
        run, src = ctx.run, data.source
        unused = [name for name in _ENCODER_RUN_OPTIONS if getattr(run, name) != getattr(RunOptions(), name)]
        if unused:
            raise BadInputError(f"mine reads embeddings, not an encoder: {', '.join(unused)} do(es) not apply")
        executor = None
        if run.ray:
            from ..distributed.ray_backend import RayExecutor

            executor = RayExecutor(run.ray)
        try:
            res = mine_shards(src.src, src.tgt, src.out_dir, margin=settings.margin, k=settings.k,
                              max_memory=settings.max_memory, max_shards=settings.max_shards,
                              keep_shards=settings.keep_shards, progress=_shard_progress(run.progress),
                              config=settings.engine(ctx.engine), executor=executor)
        finally:
            if executor is not None:
                executor.close()
        report = MineReport(result=res, source=src, settings=settings)
        if res is not None and data.texts is not None:
            pairs = select_pairs(res.knn, settings.retrieval, settings.threshold)
            atomic_write_text(src.pairs_tsv, pairs_tsv(pairs, *data.texts))
            report.n_pairs = len(pairs)
        return report

    def render(self, report: MineReport) -> str:
        res, st, src = report.result, report.settings, report.source
        if res is None:
            return f"stopped after {st.max_shards} new shard(s); run again with the same --out {src.out_dir} to resume"
        p = res.plan
        lines = [f"{p.n_src} x {p.n_tgt} (d={p.dim}, k={p.k}, {st.margin}): {p.n_shards} shard(s) of {p.shard_rows} "
                 f"rows, {res.shards_computed} computed, {res.shards_reused} reused; engine memory <= "
                 f"{p.est_peak_bytes / 2**20:.0f} MiB",
                 f"results in {src.out_dir}: fwd_idx.npy fwd_score.npy bwd_idx.npy bwd_score.npy "
                 "(+ fwd_sim.npy bwd_sim.npy)"]
        if report.n_pairs is not None:
            lines.append(f"{report.n_pairs} mined pairs ({st.retrieval}, margin > {st.threshold:g}) in {src.pairs_tsv}")
        return "\n".join(lines)


def _shard_progress(progress) -> Callable[[int, int], None] | None:
    """The engine's per-shard callback from the run's ``progress``: a callable is called as it is;
    True prints ``shards DONE/TOTAL`` on stderr, on one line."""
    if callable(progress) or not progress:
        return progress or None

    def show(done: int, total: int) -> None:
        print(f"\rshards {done}/{total}", end="\n" if done == total else "", file=sys.stderr, flush=True)

    return show


def _sentences(text_path, rows: RowSource) -> list[str]:
    """The sentences of one mining side: one per embedding row, each one TSV field. The pairs TSV is
    LASER's raw ``score<TAB>source<TAB>target`` (no quoting, as mine_bitexts writes it), so a tab, a
    bare CR (a row break for pandas and most TSV readers) or a NUL would break its one row per pair:
    such a sentence is refused before any mining, naming its line."""
    lines = read_lines(text_path)
    if len(lines) != len(rows):
        raise BadInputError(f"{text_path} has {len(lines)} lines but the {rows.name} have {len(rows)} rows; "
                            "give one sentence per embedding row")
    breaks = {"\t": "a tab", "\r": "a carriage return (CR)", "\0": "a NUL character"}
    for n, line in enumerate(lines, 1):
        for char, name in breaks.items():
            if char in line:
                raise BadInputError(f"{text_path}: line {n} holds {name}, which would break its row of the pairs TSV")
    return lines
