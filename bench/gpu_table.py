#!/usr/bin/env python3
"""The table of bench/gpu.sh from the files its runs left in a folder:
parity.log, kernels.jsonl (bench/gpu_kernel_bench), mlp-{cuda,exec}.json
and rn50-{fp32,bf16,bf16-cl,fp16}.out (`cloudfit profile --format json`), each
with .rc and .err. Markdown on stdout; exit 1 when a check failed.
Usage: gpu_table.py FOLDER PARITY_RC PARITY_MS ELAPSED_S "GPU, DRIVER" TORCH_VERSION"""
import json
import os
import sys
import time

tmp, parity_rc, parity_s, elapsed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) / 1e3, int(sys.argv[4])
gpu_line, torch_version = sys.argv[5], sys.argv[6]
failures = 0



def read(name):
    try:
        return open(os.path.join(tmp, name)).read()
    except OSError:
        return ""


def cell(text):
    """Text for a markdown table cell (a '|' would end the cell)."""
    return str(text).replace("|", "\\|")


def profile(name):
    global failures
    rc = int(read(name + ".rc") or 1)
    if rc != 0:
        failures += 1
        err = [l for l in read(name + ".err").splitlines() if l.startswith("cloudfit:")]
        return None, cell(err[0] if err else "exit %d" % rc)
    text = read(name + ".json") or read(name + ".out")
    return json.loads(text), None


gpu, _, driver = gpu_line.partition(",")
print("cloudfit bench/gpu.sh — %s, driver %s, PyTorch %s, %s UTC" % (gpu.strip(), driver.strip(), torch_version,
      time.strftime("%Y-%m-%d %H:%M", time.gmtime())))
print()
tests = [l for l in read("parity.log").splitlines() if "PASSED" in l or "FAILED" in l]
status = {0: "passed", 77: "skipped"}.get(parity_rc, "FAILED (exit %d)" % parity_rc)
failures += parity_rc != 0
print("| check | result |")
print("|---|---|")
print("| engine parity test (CUDA vs CPU twin) | %s%s, %.1f s |" % (status, (": " + tests[0].strip()) if tests else "",
                                                                 parity_s))
rows = [json.loads(l) for l in read("kernels.jsonl").splitlines() if l.startswith("{")]
head = next((r for r in rows if "device" in r), None)
if head:
    print("| cuBLAS FP32 GEMM 4096³ / device copy | %.1f TFLOP/s / %.0f GB/s |" % (
        head["cublas_fp32_gemm_4096_tflops"], head["copy_gbs"]))
print()
print("Engine kernels (MLP 784-1024-1024-10, FP32; time per call, median of 50):")
print("| batch | op | ms | cuBLAS GEMM part ms | engine's own kernels ms | GB/s (copy) |")
print("|---:|---|---:|---:|---:|---:|")
for r in rows:
    if "op" not in r or r["op"].startswith("step") or r["op"].startswith("engine"):
        continue
    own = r.get("bias_act_kernel_ms", r.get("act_backward_column_sum_kernels_ms"))
    print("| %d | %s | %.4f | %s | %s | %s |" % (
        r["batch"], r["op"], r["ms"], "%.4f" % r["cublas_sgemm_ms"] if "cublas_sgemm_ms" in r else "-",
        "%.4f" % own if own is not None else "-",
        "%.0f (%.0f)" % (r["gbs"], r["copy_gbs"]) if "gbs" in r else "-"))
print()
print("| batch | step ops ms | of which cuBLAS GEMM ms | step GFLOP/s | cuBLAS GFLOP/s at these shapes | share | engine train_step ms (incl. host→device batch) |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    if r.get("op") == "step ops (sum)":
        eng = next((e for e in rows if e.get("op", "").startswith("engine") and e["batch"] == r["batch"]), None)
        print("| %d | %.4f | %.4f | %.0f | %.0f | %.0f%% | %s |" % (
            r["batch"], r["ms"], r["cublas_sgemm_ms"], r["gflops"], r["cublas_gflops"],
            100 * r["gflops"] / r["cublas_gflops"], "%.4f" % eng["ms"] if eng else "-"))
print()
eng, err_e = profile("mlp-cuda")
tor, err_t = profile("mlp-exec")
print("MLP of examples/mlp-synthetic.json, `cloudfit profile` (median of 30 steps):")
print("| batch | CUDA engine ms | PyTorch (cloudfit_probe, fp32) ms | engine / PyTorch |")
print("|---:|---:|---:|---:|")
points = {}
for col, prof in ((0, eng), (1, tor)):
    for pt in (prof or {}).get("points", []):
        points.setdefault(pt["local_batch"], [None, None])[col] = pt["step_time_s"]
for batch in sorted(points):
    a, b = points[batch]
    print("| %d | %s | %s | %s |" % (batch, "%.4f" % (1e3 * a) if a else "-", "%.4f" % (1e3 * b) if b else "-",
                                     "%.2fx" % (a / b) if a and b else "-"))
na = (eng or {}).get("noise", {}).get("b_noise")
nb = (tor or {}).get("noise", {}).get("b_noise")
print("| B_noise | %s | %s | %s |" % ("%.6g" % na if na else "-", "%.6g" % nb if nb else "-",
                                     "%.2g %% apart" % (100 * abs(na - nb) / na) if na and nb else "-"))
for label, err in (("CUDA engine", err_e), ("PyTorch", err_t)):
    if err:
        print("| %s failed | %s | | |" % (label, err))
print()
print("ResNet-50, 224×224 SYNTHETIC images (cloudfit_probe.vision), `cloudfit profile --backend exec`, 10 steps per batch:")
print("| variant | step ms at 32 / 64 / 128 | images/s at 128 | t_c(m) = α + β·m | B_noise (synthetic task) |")
print("|---|---|---:|---|---:|")
for variant in ("fp32", "bf16", "bf16-cl", "fp16"):
    if not os.path.exists(os.path.join(tmp, "rn50-" + variant + ".rc")):
        continue  # not run (CLOUDFIT_GPU_VARIANTS)
    p, err = profile("rn50-" + variant)
    label = {"fp32": "fp32", "bf16": "bf16 autocast", "bf16-cl": "bf16 + channels-last",
             "fp16": "fp16 autocast + GradScaler"}[variant]
    if not p:
        print("| %s | failed: %s | | | |" % (label, err))
        continue
    pts = p["points"]
    fit = p.get("fit") or {}
    print("| %s | %s | %.0f | %s | %s |" % (
        label, " / ".join("%.1f" % (1e3 * x["step_time_s"]) for x in pts),
        pts[-1]["local_batch"] / pts[-1]["step_time_s"],
        "%.4g + %.4g·m s" % (fit["alpha_s"], fit["beta_s"]) if fit else "-",
        "%.4g" % p["noise"]["b_noise"] if "b_noise" in p["noise"] else cell(p["noise"].get("error", "-"))))
print()
print("total %d s%s" % (elapsed, ", %d check(s) FAILED" % failures if failures else ""))
sys.exit(1 if failures else 0)
