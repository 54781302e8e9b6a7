#!/usr/bin/env bash
# The README's demo command: installs what is missing, builds Loom, and checks
# the seed cluster configuration (examples/lambda). Later stages start a local
# cluster with `loom up` and run the seed job scripts on it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
bin=build/release/bin
echo "=== loom config check examples/lambda/slurm.conf"
"$bin/loom" config check -f examples/lambda/slurm.conf
