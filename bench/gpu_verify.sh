#!/usr/bin/env bash
# The H200 verification run behind docs/verification-log.md (run from the repository root on a
# machine with a CUDA GPU, torch and nvcc but no network; wheels are carried in .whl/):
#   .whl/flashinfer_python-0.6.18.post1-*.whl .whl/apache_tvm_ffi-*.whl   (the gpu extra)
#   .whl/cli/*.whl   attn-lint's own dependencies (click, rich, libcst, astroid, ...)
#   .whl/sg/sglang-0.5.12.post1-*.whl .whl/sg/sglang-0.5.13-*.whl          (real code to verify)
# Writes env.txt, verify_on_gpu.txt, sglang-*.json and pytest_gpu.txt under $OUT (default ./out).
set -u
OUT=${OUT:-out}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
    .whl/*.whl .whl/cli/*.whl || exit 1
# Not installed: map the top-level folders under the import name in place, as pyproject's
# package-dir does for an install (this copy of the tree is disposable).
for d in linter rules runtime_check; do ln -sfn "../$d" "attn_lint/$d"; done
for v in 0.5.12.post1 0.5.13; do
  python3 -c "import zipfile,sys;z=zipfile.ZipFile(sys.argv[1]);z.extractall(sys.argv[2],[n for n in z.namelist() if n.startswith('sglang/')])" \
      .whl/sg/sglang-$v-*.whl /tmp/sg/$v
done
export PYTHONPATH=/tmp/site:$PWD FLASHINFER_CUDA_ARCH_LIST=9.0 MAX_JOBS=16 PYTHONUNBUFFERED=1 TIMEFORMAT='wall %R s'
AL="python3 -m attn_lint --no-cache"
{ date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nvcc --version | tail -1
  python3 -c 'import sys,torch,flashinfer;print("python",sys.version.split()[0],"torch",torch.__version__,"cuda",torch.version.cuda,"flashinfer",flashinfer.__version__)'
} 2>&1 | tee "$OUT/env.txt"
for t in fixtures/al001_hidden_hook fixtures/al002_delegation_typeerror fixtures/fixed fixtures/fixed_one_arg \
         /tmp/sg/0.5.12.post1/sglang/srt /tmp/sg/0.5.13/sglang/srt; do
  echo "=== attn-lint --verify-on-gpu $t"
  time $AL --verify-on-gpu "$t"
  echo "exit=$?"
done 2>&1 | tee "$OUT/verify_on_gpu.txt"
for v in 0.5.12.post1 0.5.13; do
  $AL --verify-on-gpu --format json /tmp/sg/$v/sglang/srt > "$OUT/sglang-$v.json"
done
python3 -m pytest -q -rs -p no:cacheprovider tests/test_gpu_smoke.py tests/test_verify_cpu.py 2>&1 | tail -5 | tee "$OUT/pytest_gpu.txt"
date -u
