#!/usr/bin/env bash
# Installs the Debian 12 packages Loom needs to build and test, when missing.
# Idempotent: does nothing when everything is present. Needs root for apt-get.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config clang clang-format libclang-rt-14-dev
      libuv1-dev libjansson-dev libssl-dev libcmocka-dev libsqlite3-dev libpq-dev
      postgresql python3 python3-pytest python-is-python3
      libmunge-dev munge iproute2 mpich libmpich-dev)
# munge: AuthType=auth/munge; iproute2: the multi-host test; mpich: srun --mpi=pmi2
# and mpiexec inside an allocation are tested with a real MPI (test_srun.py)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
