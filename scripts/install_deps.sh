#!/usr/bin/env bash
# Installs the Debian packages Tandem builds and runs with. Idempotent and quiet: when every
# package is already installed it prints nothing and touches nothing; otherwise it runs apt-get
# (as root, or through sudo), or prints the exact command to run and fails.
set -euo pipefail

packages=(
  cmake g++ make                 # build
  libopenblas-dev                # golden GEMM (cblas)
  libspdlog-dev libfmt-dev       # logging, formatting
  nlohmann-json3-dev             # results JSON, traces
  libcli11-dev                   # command line
  libtomlplusplus-dev            # hardware profiles
  libgtest-dev libgmock-dev      # tests
  libbenchmark-dev               # benchmarks
  python3-numpy                  # scripts/gen_data.py (for /usr/bin/python3)
  python3-matplotlib             # prof_analysis/ charts
  pybind11-dev python3-pybind11  # the Python module `tandem` (python/, docs/API.md)
  python3-dev                    # Python.h for it
  python3-pytest                 # its test suite (ctest's python_api)
  libopenmpi-dev openmpi-bin     # --sweep over many processes/hosts (mpirun; ctest's mpi_sweep)
)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
((${#missing[@]} == 0)) && exit 0

echo "install_deps.sh: installing missing packages: ${missing[*]}" >&2
install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}")
if [[ $(id -u) -eq 0 ]]; then
  apt-get update -qq
  "${install[@]}"
elif command -v sudo >/dev/null 2>&1; then
  sudo apt-get update -qq
  sudo "${install[@]}"
else
  echo "install_deps.sh: not root and no sudo; run as root:" >&2
  echo "  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing[*]}" >&2
  exit 1
fi
