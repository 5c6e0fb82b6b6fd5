#!/usr/bin/env bash
# Installs the Debian packages seqmatch needs to build and test, when missing
# (zlib, and ISA-L and libzstd for the reader: without them it falls back to
# zlib alone and reads no zstd; Python's headers, setuptools, wheel, pip and
# pytest for the Python package and its tests, with numpy for its columnar
# results (the tests check them with and without it) and mypy for its type
# information; Open MPI for mpirun -np N
# seqmatch, without which the build has no MPI; bgzip from tabix for the
# tests' BGZF inputs; htslib's library, loaded at run time for --format bam).
# clang (with libFuzzer's runtime) is optional: it builds the fuzz targets,
# and a machine where it cannot be installed still builds and tests; so is
# samtools, which reads the SAM output back in a test.
set -euo pipefail
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
need=() optional=()
for pkg in build-essential cmake zlib1g-dev libisal-dev libzstd-dev pkg-config libopenmpi-dev openmpi-bin tabix libhts3 \
           python3-dev python3-pip python3-setuptools python3-wheel python3-pytest python3-numpy \
           python3-mypy; do
  installed "$pkg" || need+=("$pkg")
done
for pkg in clang libclang-rt-dev samtools; do
  installed "$pkg" || optional+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && [ ${#optional[@]} -eq 0 ] && exit 0
sudo_cmd=""
[ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}" >&2
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi
for pkg in "${optional[@]}"; do
  echo "installing (optional, for fuzzing and the SAM check): $pkg" >&2
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "$pkg" >/dev/null ||
    echo "deps.sh: could not install $pkg; the fuzz targets or the SAM check will be skipped" >&2
done
