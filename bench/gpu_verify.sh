#!/usr/bin/env bash
# The H200 verification run behind docs/verification.md (issue 11). Run from the repository root
# (or a copy of it) on a machine with a CUDA GPU, torch and nvcc; no network needed. Carried:
#   $WHEELS/*.whl   flashinfer-python 0.6.18.post1, apache-tvm-ffi (its one missing need on the
#                   image), libcst, astroid (attn-lint's needs the image lacks)
#   $SRT            a tar.xz of sglang-0.5.12.post1/sglang/srt, sglang-0.5.13/sglang/srt and
#                   sglang-0.5.23/sglang/srt, unpacked into the test cache (~/.cache/attn-lint-tests)
# Step "cli" writes env.txt, verify_on_gpu.txt (each tree's verdicts, bench/verification_summary.py)
# and one JSON report per tree under $OUT; step "tests" writes pytest_gpu.txt (the GPU tests read
# those reports). Usage: bash bench/gpu_verify.sh cli|tests|all
set -u
STEP=${1:-all}
OUT=${OUT:-out}; mkdir -p "$OUT"
WHEELS=${WHEELS:-.devcarry/whl}; SRT=${SRT:-.devcarry/srt3.tar.xz}
if [ ! -d /tmp/site/flashinfer ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
      "$WHEELS"/*.whl || exit 1
fi
CACHE=~/.cache/attn-lint-tests; mkdir -p "$CACHE"
[ -f "$CACHE/sglang-0.5.23/sglang/__init__.py" ] || tar -xJf "$SRT" -C "$CACHE" || exit 1
export PYTHONPATH=/tmp/site:$PWD FLASHINFER_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 PYTHONUNBUFFERED=1
if [ "$STEP" = cli ] || [ "$STEP" = all ]; then
  { date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nvcc --version | tail -1
    python3 -c 'import sys,torch,flashinfer;print("python",sys.version.split()[0],"torch",torch.__version__,"cuda",torch.version.cuda,"flashinfer",flashinfer.__version__)'
  } 2>&1 | tee "$OUT/env.txt"
  for t in tests/data/flashinfer_tree/fitree "$CACHE"/sglang-0.5.12.post1/sglang/srt \
           "$CACHE"/sglang-0.5.13/sglang/srt "$CACHE"/sglang-0.5.23/sglang/srt; do
    name=$(echo "$t" | sed -E 's#.*/(sglang-[^/]*)/sglang/srt#\1#; s#.*/fitree#flashinfer_tree#')
    echo "=== attn-lint --no-cache --verify-on-gpu --show-latent --format json $name"
    start=$(date +%s)
    python3 -m attn_lint --no-cache --verify-on-gpu --show-latent --format json "$t" > "$OUT/$name.json" \
        2> >(grep -v -e SyntaxWarning -e '^  """' >&2)
    echo "exit=$? wall=$(( $(date +%s) - start )) s"
    python3 bench/verification_summary.py "$OUT/$name.json"
  done 2>&1 | tee "$OUT/verify_on_gpu.txt"
fi
if [ "$STEP" = tests ] || [ "$STEP" = all ]; then
  # The GPU tests read the reports the step above wrote (the same command), or run it themselves.
  ATTN_LINT_GPU_REPORTS=$OUT python3 -m pytest -q -rs -p no:cacheprovider tests/test_gpu_smoke.py tests/test_verify_gpu.py \
      tests/test_verify_cpu.py tests/test_verify_pairing.py tests/test_real_hook.py -k "not sarif" 2>&1 \
      | tail -25 | tee "$OUT/pytest_gpu.txt"
fi
date -u
