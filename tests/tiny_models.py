"""Tiny, random, offline models in the real published formats, for tests and benchmarks.

Real weights cannot be downloaded here, so each builder writes a model folder (or LASER
checkpoint) in exactly the layout the real checkpoint has, and the adapters load it through the
code path they use for real models. Vocabularies are trained on real text (OLDI seed eng/fur/ita,
the demo corpus) with ``tokenizers`` / ``sentencepiece``, so tokenisation is realistic even though
the weights are random. Seeds are fixed: the same call builds the same model.

``python tests/tiny_models.py OUTDIR`` writes all of them (bert/, xlmr/, sbert/, labse/, laser/).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# OLDI seed from the shared data folder ($XSIMPP_DATA_DIR, else ../shared/data beside the checkout).
SEED = Path(os.environ.get("XSIMPP_DATA_DIR") or REPO.parent / "shared" / "data") / "oldi-seed"


def seed_files(folder: Path, n: int) -> tuple[Path, Path]:
    """The first ``n`` lines of the OLDI seed's Friulian and English sides as two line-aligned files
    (a test without the shared data skips -- fails under XSIMPP_REQUIRE_DATA=1 -- with the reason)."""
    if not (SEED / "fur_Latn").is_file() or not (SEED / "eng_Latn").is_file():
        from conftest import DATA_HINT, missing

        missing(f"the OLDI seed (fur_Latn, eng_Latn) is not in {SEED} ({DATA_HINT})", data=True)
    src, tgt = folder / "fur.txt", folder / "eng.txt"
    src.write_text("\n".join((SEED / "fur_Latn").read_text(encoding="utf-8").splitlines()[:n]) + "\n", encoding="utf-8")
    tgt.write_text("\n".join((SEED / "eng_Latn").read_text(encoding="utf-8").splitlines()[:n]) + "\n", encoding="utf-8")
    return src, tgt


def corpus(n: int = 1500) -> list[str]:
    """Training text for the vocabularies: OLDI seed lines (if present) + the demo corpus."""
    lines: list[str] = []
    for lang in ("eng_Latn", "fur_Latn", "ita_Latn"):
        f = SEED / lang
        if f.is_file():
            lines += f.read_text(encoding="utf-8").splitlines()[:n]
    for f in sorted((REPO / "xsimpp" / "data" / "demo").rglob("*")):
        if f.is_file() and f.suffix not in (".json", ".md", ".tsv"):
            lines += [ln for ln in f.read_text(encoding="utf-8").splitlines() if ln.strip()]
    return lines


def _quiet():
    import transformers

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def build_bert(out: Path, *, hidden: int = 32, layers: int = 2, vocab: int = 1500, seed: int = 0) -> Path:
    """A BERT folder (WordPiece vocab trained here, random weights) as save_pretrained writes it."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    _quiet()
    out.mkdir(parents=True, exist_ok=True)
    wp = BertWordPieceTokenizer(lowercase=False)
    wp.train_from_iterator(corpus(), vocab_size=vocab, min_frequency=2, show_progress=False)
    tok = BertTokenizerFast(tokenizer_object=wp._tokenizer, unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                            cls_token="[CLS]", mask_token="[MASK]")
    tok.save_pretrained(str(out))
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                     intermediate_size=2 * hidden, max_position_embeddings=256, pad_token_id=tok.pad_token_id)
    BertModel(cfg).save_pretrained(str(out))
    return out


def build_xlmr(out: Path, *, hidden: int = 32, layers: int = 2, vocab: int = 1500, seed: int = 0) -> Path:
    """An XLM-R folder (Unigram sentencepiece-style vocab trained here, random weights)."""
    import torch
    from tokenizers import SentencePieceUnigramTokenizer
    from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaTokenizerFast

    _quiet()
    out.mkdir(parents=True, exist_ok=True)
    sp = SentencePieceUnigramTokenizer()
    sp.train_from_iterator(corpus(800), vocab_size=vocab, show_progress=False,
                           special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], unk_token="<unk>")
    tok = XLMRobertaTokenizerFast(tokenizer_object=sp._tokenizer, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                  cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>")
    tok.save_pretrained(str(out))
    torch.manual_seed(seed)
    cfg = XLMRobertaConfig(vocab_size=len(tok), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                           intermediate_size=2 * hidden, max_position_embeddings=260, pad_token_id=tok.pad_token_id,
                           bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    XLMRobertaModel(cfg).save_pretrained(str(out))
    return out


def build_sbert(out: Path, bert_dir: Path, *, labse_style: bool = False, seed: int = 0) -> Path:
    """A sentence-transformers folder around ``bert_dir``: mean pooling, or LaBSE's stack
    (CLS pooling -> Dense(d, d, tanh) -> Normalize) with ``labse_style``."""
    import torch
    from sentence_transformers import SentenceTransformer, models

    _quiet()
    torch.manual_seed(seed)
    word = models.Transformer(str(bert_dir), max_seq_length=128)
    get_dim = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    dim = get_dim()
    if labse_style:
        mods = [word, models.Pooling(dim, pooling_mode="cls"),
                models.Dense(dim, dim, activation_function=torch.nn.Tanh()), models.Normalize()]
    else:
        mods = [word, models.Pooling(dim, pooling_mode="mean")]
    SentenceTransformer(modules=mods, device="cpu").save(str(out))
    return out


def train_spm(out_prefix: Path, *, vocab: int = 800) -> Path:
    """A sentencepiece model trained on lowercased text (LASER's models see lowercased input)."""
    import sentencepiece as spm

    text = out_prefix.with_suffix(".txt")
    text.parent.mkdir(parents=True, exist_ok=True)
    text.write_text("\n".join(ln.lower() for ln in corpus(1000)), encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(text), model_prefix=str(out_prefix), vocab_size=vocab,
                                   character_coverage=1.0, model_type="unigram", minloglevel=2)
    Path(str(out_prefix) + ".model").rename(str(out_prefix) + ".spm")
    Path(str(out_prefix) + ".vocab").unlink()
    text.unlink()
    return Path(str(out_prefix) + ".spm")


def build_laser(folder: Path, *, name: str = "laser2", embed_dim: int = 16, hidden: int = 24, layers: int = 3,
                seed: int = 0, spm_model: Path | None = None) -> Path:
    """A LASER checkpoint in the official layout: ``name.pt`` = {"params", "model", "dictionary"},
    beside ``name.spm`` and ``name.cvocab`` (fairseq dictionary text: "piece count" lines)."""
    import sentencepiece as spm
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    spm_path = spm_model or train_spm(folder / name)
    proc = spm.SentencePieceProcessor(model_file=str(spm_path))
    pieces = [proc.id_to_piece(i) for i in range(proc.get_piece_size())]
    pieces = [p for p in pieces if p not in ("<unk>", "<s>", "</s>")]
    # fairseq dictionaries start with <s>, <pad>, </s>, <unk>; the file lists the rest in order.
    dictionary = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for p in pieces:
        dictionary.setdefault(p, len(dictionary))
    (folder / f"{name}.cvocab").write_text("".join(f"{p} 1\n" for p in pieces), encoding="utf-8")
    params = {"num_embeddings": len(dictionary), "padding_idx": 1, "embed_dim": embed_dim, "hidden_size": hidden,
              "num_layers": layers, "bidirectional": True, "left_pad": True, "padding_value": 0.0}
    g = torch.Generator().manual_seed(seed)
    state = {"embed_tokens.weight": torch.randn(len(dictionary), embed_dim, generator=g) * 0.5}
    state["embed_tokens.weight"][1] = 0.0  # nn.Embedding(padding_idx=1) keeps the pad row at zero
    for layer in range(layers):
        d_in = embed_dim if layer == 0 else 2 * hidden
        for suffix in ("", "_reverse"):
            state[f"lstm.weight_ih_l{layer}{suffix}"] = torch.randn(4 * hidden, d_in, generator=g) * 0.3
            state[f"lstm.weight_hh_l{layer}{suffix}"] = torch.randn(4 * hidden, hidden, generator=g) * 0.3
            state[f"lstm.bias_ih_l{layer}{suffix}"] = torch.randn(4 * hidden, generator=g) * 0.1
            state[f"lstm.bias_hh_l{layer}{suffix}"] = torch.randn(4 * hidden, generator=g) * 0.1
    torch.save({"params": params, "model": state, "dictionary": dictionary}, folder / f"{name}.pt")
    if spm_path != folder / f"{name}.spm":
        (folder / f"{name}.spm").write_bytes(Path(spm_path).read_bytes())
    return folder / f"{name}.pt"


def cached(kind: str) -> Path:
    """A tiny model built once per version of this file and reused (building costs ~10 s each).

    Lives in $XSIMPP_TINY_MODELS or the temp folder, keyed by this file's checksum; built in a
    temporary folder and renamed into place, so parallel test processes never see half a model."""
    import hashlib
    import os
    import shutil
    import tempfile

    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    root = Path(os.environ.get("XSIMPP_TINY_MODELS") or Path(tempfile.gettempdir()) / f"xsimpp-tiny-{digest}")
    final = root / kind
    if not final.exists():
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{kind}-", dir=root))
        try:
            if kind == "bert":
                build_bert(tmp / "m")
            elif kind == "xlmr":
                build_xlmr(tmp / "m")
            elif kind in ("sbert", "labse"):
                build_sbert(tmp / "m", cached("bert"), labse_style=kind == "labse")
            elif kind == "laser":
                build_laser(tmp / "m")
            else:
                raise ValueError(kind)
            try:
                os.replace(tmp / "m", final)
            except OSError:  # another process won the race; its copy is identical
                pass
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def build_all(root: Path) -> dict[str, Path]:
    root = Path(root)
    bert = build_bert(root / "bert")
    paths = {"bert": bert, "xlmr": build_xlmr(root / "xlmr"), "sbert": build_sbert(root / "sbert", bert),
             "labse": build_sbert(root / "labse", bert, labse_style=True), "laser": build_laser(root / "laser")}
    return paths


if __name__ == "__main__":
    for k, v in build_all(Path(sys.argv[1] if len(sys.argv) > 1 else "tiny-models")).items():
        print(f"{k}\t{v}")
