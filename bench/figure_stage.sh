# The `figure` stage of bench/gpu_checks.sh (sourced there, after its helpers; never run on its own): a bare node
# with torch to richter2020.fig7 in one command. It installs the offline bundle, checks what the run imports, runs
# the figure through Ray Tune under the stage's time budget, and packs its rows and logs into OUT/figure.tar.gz.
# docs/gpu.md ("The figure in one command") says how to build the bundle, carry it and resume in a later window.
# shellcheck shell=bash disable=SC2154  # stage, work, out, device, budget and the helpers come from gpu_checks.sh
scale=${FIGURE_SCALE:-paper}
case $scale in paper | cpu | smoke) ;; *) echo "invalid FIGURE_SCALE '$scale'; allowed: paper, cpu, smoke" >&2; exit 2 ;; esac
bundle=${BUNDLE:-.bundle}
storage=${FIGURE_STORAGE:-results-gpu/figure}
gpus=${FIGURE_GPUS:-0.25}
precision=${FIGURE_PRECISION:-$([ "$device" = cuda ] && echo bf16 || echo fp32)}
[ "$device" = cuda ] && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$work/gpu.txt"
python3 -m pip list --format=freeze >"$work/node-packages.txt" 2>/dev/null  # what the image holds, for the next build

start=$SECONDS
if compgen -G "$bundle/part-*-of-*.tar" >/dev/null; then
    python3 tools/offline_bundle.py install "$bundle" ${BUNDLE_SITE:+--site "$BUNDLE_SITE"} 2>&1 | tee "$work/install.log"
    note "install ($((SECONDS - start)) s)" "${PIPESTATUS[0]}"
else
    echo "no bundle in $bundle: using what the node has" | tee "$work/install.log"
fi
# Everything `study run` imports, driver and workers: one line naming what is missing, before Ray starts.
needed="torch ray ray.tune optuna polars pyarrow pandas numpy scipy pydantic click matplotlib sqlalchemy study.cli"
python3 - "$device" $needed <<'PY' 2>&1 | tee "$work/ready.txt"
import importlib, sys
device, names = sys.argv[1], sys.argv[2:]
missing = []
for name in names:
    try:
        importlib.import_module(name)
    except Exception as error:  # noqa: BLE001 - any failure to import is a missing piece
        missing.append(f"{name} ({type(error).__name__}: {error})")
if missing:
    sys.exit("not ready: " + "; ".join(missing) + " (docs/gpu.md: build the bundle for this node's package list)")
import importlib.metadata as md
try:
    md.version("attention-studies")  # the checkout installed: its model families come in as entry points
except md.PackageNotFoundError:
    sys.exit("not ready: this checkout is not installed (pip install -e . failed: install.log says why)")
import torch
if device == "cuda" and not torch.cuda.is_available():
    sys.exit("not ready: torch sees no CUDA device")
print("ready:", *(f"{n} {md.version(n)}" for n in names if "." not in n))
PY
((PIPESTATUS[0] == 0)) || { note "ready" 1; tar czf "$out/$stage.tar.gz" -C "$out" "$stage"; exit "$status"; }

args=(run richter2020.fig7 --scale "$scale" --storage "$storage" --budget adaptive --learning-rates-per-trial all
    --order-by d_model --precision "$precision" --no-report)
if [ "$device" = cuda ]; then
    args+=(--gpus-per-trial "$gpus")
    gpu=$(sample_gpu figure)
fi
started=$SECONDS
run_until "$(left)" python3 -m study.cli "${args[@]}" 2>&1 | tee "$work/figure.log"
code=${PIPESTATUS[0]}
echo "study run: $((SECONDS - started)) s, exit $code" | tee -a "$work/figure.log"
# exit 3 is a finding that failed: the figure ran to its end, and the verdict is a result, not a fault
((code == 3)) && code=0
note "richter2020.fig7 --scale $scale" "$code"
[ -n "${gpu:-}" ] && kill "$gpu"
python3 -m study.cli status richter2020.fig7 --scale "$scale" --storage "$storage" 2>&1 | tee "$work/status.txt"
mkdir -p "$work/results"  # the rows and study.json (no report, no Tune state): what a later window resumes from
tar cf - --exclude=report --exclude=_tune --exclude=.lock -C "$storage" . | tar xf - -C "$work/results"
tar czf "$out/$stage.tar.gz" -C "$out" "$stage" && rm -rf "${work:?}"
ls -la "$out/$stage.tar.gz"
exit $status
