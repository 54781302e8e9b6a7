#!/usr/bin/env bash
# The README's demo command: installs what is missing, builds Loom, checks the
# seed cluster's configuration, starts a local emulated cluster with `loom up`,
# runs the seed job scripts on it unchanged (seed 000's job.bash, seed 004's
# single-GPU script adapted only in module loads and paths), shows squeue, sacct and
# the jobs' output files, and stops the cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
bash scripts/deps.sh
echo "=== building Loom (release preset)"
cmake --preset release >/dev/null
if ! cmake --build --preset release -j "$(nproc 2>/dev/null || echo 2)" >/tmp/loom-demo-build.log 2>&1; then
  cat /tmp/loom-demo-build.log; exit 1
fi
bin=$top/build/release/bin

echo "=== loom config check -f examples/lambda/slurm.conf (seed 004's cluster)"
"$bin/loom" config check -f examples/lambda/slurm.conf
echo

run=$top/loom-run/demo
[ -f "$run/loom-up.pids" ] && "$bin/loom" down --dir "$run" >/dev/null || true
echo "=== loom up --dir $run --nodes 2 --gpus-per-node 4"
"$bin/loom" up --dir "$run" --nodes 2 --gpus-per-node 4 --gpu-type h100
trap '"$bin/loom" down --dir "$run"' EXIT
export SLURM_CONF=$run/etc/slurm.conf PATH=$bin:$top/examples/bin:$PATH

work=$run/work
rm -rf "$work" && mkdir -p "$work" && cp -r examples/seed000 examples/seed004 "$work/"
echo
echo "=== sinfo"
sinfo
echo
echo "=== sbatch job.bash (seed 000, unchanged)"
cd "$work/seed000" && j1=$(sbatch job.bash | tee /dev/stderr | awk '{print $4}')
echo "=== sbatch pytorch_single_gpu.slurm (seed 004 §7.3.2.1)"
cd "$work/seed004" && j2=$(sbatch pytorch_single_gpu.slurm | tee /dev/stderr | awk '{print $4}')
echo
echo "=== squeue"
squeue
for _ in $(seq 120); do
  [ -z "$(squeue -h -j "$j1,$j2" -t PD,R,CG 2>/dev/null)" ] && break
  sleep 0.5
done
echo
echo "=== sacct (loomctld streams job records to loomdbd, SQLite in $run/state)"
for _ in $(seq 40); do
  [ "$(sacct -n -X -j "$j1,$j2" -s CD,F,CA,TO,OOM,NF 2>/dev/null | wc -l)" -ge 2 ] && break
  sleep 0.25
done
sacct -j "$j1,$j2"
echo
echo "=== scontrol show job $j2 (abridged)"
scontrol show job "$j2" | grep -E 'JobId|JobState|NodeList|TRES|StdOut' || true
echo
echo "=== $work/seed000/slurm-$j1.out"
cat "$work/seed000/slurm-$j1.out"
echo
echo "=== $work/seed004/pytorch_single_${j2}.out"
cat "$work/seed004/pytorch_single_${j2}.out"
echo "=== $work/seed004/pytorch_single_${j2}.err"
cat "$work/seed004/pytorch_single_${j2}.err"
echo
echo "=== metrics written by the job: $work/seed004/results/$j2/metrics.json"
cat "$work/seed004/results/$j2/metrics.json"; echo
