#!/usr/bin/env bash
# The GPU path, measured on a CUDA machine in stages that each end inside a time budget (a lent GPU machine
# may cap one command at 10 minutes): docs/gpu.md says how to run them and where their numbers go.
#
#   bench/gpu_checks.sh STAGE OUT [SECONDS]
#
#   tests       the test suite with CUDA visible (device-parametrized tests run on cpu and cuda)
#   device-tests  only the test files that run on every device (those that import tests.tiny's DEVICES): the
#               part of the suite a GPU changes, for a short lease
#   bench-fp32  bench/throughput.py on cuda: solo vs packed K = 5, 50, the largest K <= 4096 that fits,
#               and packed K = 50 under torch.compile(mode="reduce-overhead") (CUDA graphs), in one run
#   bench-bf16  the same under bf16 autocast
#   fractions   richter2020.fig7 at cpu scale through Ray Tune with --gpus-per-trial 0.25, 0.5 and 1, each in
#               its own storage (results-gpu/FRACTION), GPU utilisation sampled twice a second
#   step        the packed step of issue 49 against BASELINE (default .gpu/base: a copy of 8608c85's trainables/ and
#               bench/): bench/throughput.py of both (bf16 d = 16, 128; K = 50 compiled and eager, the largest K <= 512),
#               the CUDA tests of the counter draws and the compiled step, bench/profile_step.py at d = 128 K = 50,
#               bench/trainer_slice.py (evaluation share at the paper's cadence), fp32 of both at d = 128; each part
#               under its own time limit, in order of value; last, the CTL family's packed seeds (issue 56, not yet
#               measured on a GPU): bench/ctl_throughput.py at the paper's scale, NDR and the Transformer one at a
#               time vs packed K = 5
#   paper       paper-scale runs in the issue's order of value (gros2024.fig5, gros2024.fig7,
#               csordas2021.table1, richter2020.fig7) in results-gpu/paper
#   figure      a bare node to richter2020.fig7 in one command: installs the bundle (BUNDLE, default .bundle: the
#               parts tools/offline_bundle.py built; skipped when BUNDLE holds none), then `study run` with every
#               learning rate and seed of a configuration in one trial, the adaptive budget and the smallest d first,
#               in FIGURE_STORAGE (default results-gpu/figure; a later call, or a new node given the rows of an
#               earlier OUT there, resumes without losing or repeating a trial). FIGURE_SCALE (default paper; smoke
#               and cpu for tests), FIGURE_DEVICE (default cuda; cpu runs without nvidia-smi, the slow test's way),
#               FIGURE_GPUS (GPUs per trial, default 0.25), FIGURE_PRECISION (default bf16 on cuda, fp32 on cpu)
#
# Studies run as `python3 -m study.cli` (the python3 that holds torch; no PATH assumptions).
# Each stage leaves ONE file, OUT/STAGE.tar.gz: its logs, nvidia-smi samples and the Parquet results of its
# studies (under results/). SECONDS (default 540, at least 60) bounds the stage; a study cut off by it
# resumes on the next call from results-gpu/ (while the machine keeps it) without losing or repeating a
# trial. Exit status: 0 when every step finished, else the first failing step's (124: cut off by the budget).
set -uo pipefail
stage=${1:?STAGE: tests, device-tests, bench-fp32, bench-bf16, fractions, paper, step or figure}
out=${2:?OUT: a directory for the stage file}
budget=${3:-540}
case $stage in
tests | device-tests | bench-fp32 | bench-bf16 | fractions | paper | step | figure) ;;
*)
    echo "unknown STAGE '$stage'; allowed: tests, device-tests, bench-fp32, bench-bf16, fractions, paper, step, figure" >&2
    exit 2
    ;;
esac
if ! [[ $budget =~ ^[0-9]+$ ]] || ((budget < 60)); then
    echo "invalid SECONDS '$budget'; allowed: a whole number of seconds, at least 60" >&2
    exit 2
fi
device=cuda
if [[ $stage == figure ]]; then
    device=${FIGURE_DEVICE:-cuda}
    [[ $device == cuda || $device == cpu ]] || { echo "invalid FIGURE_DEVICE '$device'; allowed: cuda, cpu" >&2; exit 2; }
fi
if [[ $device == cuda ]]; then
    hint=$([[ $stage == figure ]] && echo " (FIGURE_DEVICE=cpu runs it on a CPU)")
    command -v nvidia-smi >/dev/null || { echo "nvidia-smi not found: the $stage stage needs a CUDA machine$hint" >&2
        exit 1; }
fi
mkdir -p "$out" && out=$(cd "$out" && pwd)  # absolute: the script works from the repository root
cd "$(dirname "$0")/.." || exit 1
work=$out/$stage
mkdir -p "$work"
export PYTHONUNBUFFERED=1
deadline=$((SECONDS + budget - 25))  # 25 s for stopping the last study (10 s grace) and packing up
left() { local s=$((deadline - SECONDS)); echo $((s > 1 ? s : 1)); }
status=0
note() {  # note STEP STATUS: remember the first failure, say what happened to every step
    if (($2 != 0)); then
        echo "== $1: $([ "$2" = 124 ] && echo "CUT OFF by the time budget" || echo "FAILED (exit $2)")"
        ((status == 0)) && status=$2
    else
        echo "== $1: done"
    fi
}

if [[ $stage != figure ]]; then  # the figure stage installs its dependencies first (bench/figure_stage.sh)
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$work/gpu.txt" || exit 1
    # The bench stages need torch and this checkout alone (PYTHONPATH: before the bundle has installed it), so a short
    # lease can time them while the bundle's first part is all the node holds; the others need every dependency.
    export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
    # deltalake only for the suite: a study runs without it (its trial files wait for `study compact`: docs/gpu.md)
    case $stage in bench-* | step) needs="" ;; tests) needs=", ray, optuna, polars, deltalake" ;; *) needs=", ray, optuna, polars" ;; esac
    python3 -c "import torch$needs; assert torch.cuda.is_available(), 'torch sees no CUDA device'; \
    import sys; print(*(f'{m} {sys.modules[m].__version__}' for m in 'torch$needs'.split(', ')))" \
        || { echo "not ready: install the dependencies first, every part of the bundle (docs/gpu.md)"; exit 1; }
fi

run_until() {  # run_until SECONDS COMMAND...: COMMAND in a process group of its own, stopped (SIGTERM, then
    # SIGKILL 10 s later) with everything it started, Ray's processes included, if it outlives SECONDS; 124 then.
    # SIGTERM, not SIGINT: a background job of a script starts with SIGINT ignored, and so would Python.
    local limit=$1 flag
    shift
    flag=$(mktemp -u)  # made by the watchdog when it stops the command: then, and only then, the status is 124
    setsid "$@" &
    local pid=$!
    # The watchdog holds none of our output (a pipe to tee would wait for its sleep) and is a group of its own.
    setsid bash -c 'sleep "$1"; touch "$3"; kill -TERM -- "-$2"; sleep 10; kill -KILL -- "-$2"' _ "$limit" "$pid" \
        "$flag" </dev/null >/dev/null 2>&1 &
    local watchdog=$!
    wait "$pid"
    local code=$?
    kill -- "-$watchdog" 2>/dev/null  # its group: the sleep too
    kill "$watchdog" 2>/dev/null  # in case it had not made its group yet
    [ -e "$flag" ] && code=124 && rm -f "$flag"
    return $code
}

sample_gpu() {  # nvidia-smi samples into WORK/NAME.util.csv until the returned pid is killed
    nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -lms 500 \
        >"$work/$1.util.csv" 2>/dev/null </dev/null &
    echo $!
}

keep_results() {  # keep_results NAME DIR: DIR's studies (trials, study.json; no report) into WORK/results/NAME
    [ -d "$2" ] || { echo "no results in $2"; return; }
    mkdir -p "$work/results/$1"
    tar cf - --exclude=report -C "$2" . | tar xf - -C "$work/results/$1"
}

if [[ $stage == figure ]]; then
    # shellcheck source=bench/figure_stage.sh
    source bench/figure_stage.sh  # installs the bundle, runs the figure, packs OUT/figure.tar.gz, exits
fi

case $stage in
tests)
    # Four files need what a GPU image rarely has and never touch CUDA: Jupyter (test_notebooks), a local
    # S3 server (test_storage_uri, moto), Chromium (test_report_browser) and the trackers' clients (test_tracking:
    # mlflow, wandb; the bundle leaves them out to fit a capped transfer). Named here, not skipped silently.
    timeout -k 10 "$(left)" python3 -m pytest -q -n 8 --dist loadfile \
        --ignore=tests/test_notebooks.py --ignore=tests/test_storage_uri.py --ignore=tests/test_report_browser.py \
        --ignore=tests/test_tracking.py \
        2>&1 | tee "$work/tests.log"
    note "pytest" "${PIPESTATUS[0]}"
    ;;
device-tests)
    # The files that parametrize over tests.tiny's DEVICES: found here, so a new one joins without a list to edit.
    mapfile -t files < <(grep -l "DEVICES" tests/test_*.py)
    timeout -k 10 "$(left)" python3 -m pytest -q -n 8 --dist loadfile -p no:cacheprovider "${files[@]}" \
        2>&1 | tee "$work/device-tests.log"
    note "pytest (${#files[@]} files)" "${PIPESTATUS[0]}"
    ;;
bench-fp32 | bench-bf16)
    # Rows print as each d finishes, so a run cut off by the budget keeps the d values it finished. The
    # largest K is capped at 4096: building K members and drawing their K batches are host loops (at d = 256,
    # K = 1024 took 100 s to build on the 2-core development CPU), so a larger K measures the host.
    flag=$([ "$stage" = bench-bf16 ] && echo --bf16)
    timeout -k 10 "$(left)" python3 bench/throughput.py --device cuda $flag --threads 4 --runs 3 \
        --d-model 16 64 128 256 --packs 5 50 --auto --max-k 4096 --compile 50 --compile-mode reduce-overhead \
        2>&1 | tee "$work/$stage.log"
    note "throughput" "${PIPESTATUS[0]}"
    ;;
fractions)
    remaining=3
    for fraction in 0.25 0.5 1; do
        gpu=$(sample_gpu "$fraction")
        slot=$(($(left) / remaining))  # an equal share of what is left: 1/3, then 1/2 of the rest, then all
        remaining=$((remaining - 1))
        run_until "$((slot > 1 ? slot : 1))" python3 -m study.cli run richter2020.fig7 --scale cpu \
            --storage "results-gpu/$fraction" --gpus-per-trial "$fraction" --no-report 2>&1 | tee "$work/$fraction.log"
        note "fig7 at $fraction GPU per trial" "${PIPESTATUS[0]}"
        kill "$gpu"
        keep_results "$fraction" "results-gpu/$fraction"
    done
    ;;
step)
    base=${BASELINE:-.gpu/base}
    [ -f "$base/bench/throughput.py" ] || { echo "no baseline checkout at $base (BASELINE)" >&2; exit 2; }
    gpu=$(sample_gpu step)
    part() {  # part NAME SECONDS COMMAND...: one part under its own limit (and the stage's), its log kept
        local name=$1 limit=$2
        shift 2
        ((limit > $(left))) && limit=$(left)
        timeout -k 5 "$limit" "$@" 2>&1 | tee "$work/$name.log"
        note "$name" "${PIPESTATUS[0]}"
    }
    bench=(--device cuda --threads 4 --runs 3 --packs 50 --auto)
    part new-bf16 200 python3 bench/throughput.py "${bench[@]}" --bf16 --d-model 128 16 --eager 50 --max-k 512
    part base-bf16 90 env PYTHONPATH="$PWD/$base" python3 "$base/bench/throughput.py" "${bench[@]}" --bf16 \
        --d-model 128 16 --max-k 512
    part cuda-tests 70 python3 -m pytest -q -p no:cacheprovider tests/test_counter_draws.py tests/test_compiled_step.py \
        tests/test_gpu_fit.py \
        --deselect "tests/test_compiled_step.py::test_compiled_rows_equal_eager_rows[cpu]"
    part profile 50 python3 bench/profile_step.py --bf16 --d-model 128 --k 50
    part profile-eager 25 python3 bench/profile_step.py --bf16 --d-model 128 --k 50 --compile off --steps 10
    part slice 90 python3 bench/trainer_slice.py --device cuda --bf16 --d-model 64 --k 5 50 --steps 200
    part new-fp32 50 python3 bench/throughput.py "${bench[@]}" --d-model 128
    part base-fp32 30 env PYTHONPATH="$PWD/$base" python3 "$base/bench/throughput.py" "${bench[@]}" --d-model 128
    # Issue 56, NOT YET MEASURED on a GPU: does packing the CTL family's seeds pay at the paper's scale?
    part ctl 60 python3 bench/ctl_throughput.py --device cuda --threads 4 --scale paper --steps 20 --packs 5 \
        --models NDR Transformer
    kill "$gpu"
    ;;
paper)
    gpu=$(sample_gpu paper)
    for name in gros2024.fig5 gros2024.fig7 csordas2021.table1 richter2020.fig7; do
        if (($(left) <= 60)); then
            note "$name (not started: under a minute left)" 124
            continue
        fi
        run_until "$(left)" python3 -m study.cli run "$name" --scale paper --storage results-gpu/paper \
            --gpus-per-trial 0.25 --no-report 2>&1 | tee "$work/$name.log"
        note "$name" "${PIPESTATUS[0]}"
    done
    kill "$gpu"
    keep_results paper results-gpu/paper
    ;;
esac
tar czf "$out/$stage.tar.gz" -C "$out" "$stage" && rm -rf "${work:?}"
ls -la "$out/$stage.tar.gz"
exit $status
