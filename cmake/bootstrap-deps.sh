#!/usr/bin/env bash
# Installs einrel's dependencies on Debian 12 (bookworm):
#   * Debian binary packages: MPICH, parallel HDF5 (MPICH build), OpenBLAS, ScaLAPACK (MPICH build),
#     GoogleTest, Google Benchmark, python3-numpy/h5py, graphviz, clang-format;
#   * Kokkos (OpenMP + Serial), Kokkos Kernels (BLAS + BATCHED, OpenBLAS underneath) and Teuchos (MPICH)
#     built from Debian's own `trilinos` source package into a prefix keyed by a version stamp.
# Debian's libtrilinos-* binaries are not used: their Kokkos is Serial-only and their Teuchos links
# Open MPI (docs/dependencies.md).
#
# Backends (`--backend NAME`, default openmp), each in its own prefix with its own version stamp:
#   openmp  Kokkos OpenMP + Serial, Kokkos Kernels and Teuchos, built with g++: the normal build.
#   serial  Kokkos Serial and Kokkos Kernels built with clang-14 (plus clang-14 and its sanitizer and
#           libFuzzer runtimes from Debian) for the sanitizer and fuzzing build; Teuchos is host code with
#           no Kokkos in it and is taken from the openmp prefix, which this backend sets up first.
#   cuda    Kokkos Cuda + OpenMP + Serial (CUDA lambdas on; GPU code for one architecture, EINREL_CUDA_ARCH,
#           default AMPERE80; HOPPER90 for an H100/H200) and Kokkos Kernels (cuBLAS on the device,
#           OpenBLAS on the host; explicit instantiation only for double, LayoutLeft, <Cuda, CudaSpace>),
#           all compiled by Kokkos' nvcc_wrapper (installed as PREFIX/bin/nvcc_wrapper: build einrel with
#           it as CMAKE_CXX_COMPILER). Needs the CUDA toolkit with cuBLAS (not from Debian; 13.0 tested),
#           no GPU. Kokkos 3.4 does not build with CUDA 13 as released: its sources are copied under
#           EINREL_DEPS_CACHE and patched there with cmake/patches/ (each patch says what it fixes).
#           Teuchos comes from the openmp prefix, as for serial.
#
# Idempotent: when everything is in place it only checks and returns in seconds.
# Prints the CMAKE_PREFIX_PATH to build against on the last line of standard output (one prefix, or for
# serial and cuda "SERIAL;OPENMP" and "CUDA;OPENMP"); `bootstrap-deps.sh [--backend NAME] --print-prefix`
# prints only it.
#
# Environment:
#   EINREL_DEPS_ROOT   where stamped prefixes live         (default /opt/einrel-deps)
#   EINREL_DEPS_CACHE  where sources and build trees live  (default /var/cache/einrel-deps)
#   EINREL_DEPS_JOBS   parallel build jobs                  (default: nproc)
#   EINREL_CUDA_HOME   CUDA toolkit for --backend cuda      (default: $CUDA_HOME, else /usr/local/cuda)
#   EINREL_CUDA_ARCH   Kokkos GPU architecture for --backend cuda: TURING75, AMPERE80 (default), AMPERE86
#                      or HOPPER90. Kokkos aborts on a GPU of another major compute capability, so build
#                      for the GPU that runs the code: sm_80 code does not start on an H100.
set -euo pipefail

backend=openmp
print_prefix=0
while [[ $# -gt 0 ]]; do
  case "$1" in
  --backend) backend=${2:-}; shift 2 || shift ;;
  --backend=*) backend=${1#--backend=}; shift ;;
  --print-prefix) print_prefix=1; shift ;;
  *) echo "usage: bash cmake/bootstrap-deps.sh [--backend openmp|serial|cuda] [--print-prefix]" >&2; exit 2 ;;
  esac
done

# Bump a stamp when any build option of its backend changes (for cuda: or any of its patches): a new
# stamp means a new prefix.
case "$backend" in
openmp) STAMP="trilinos-13.2.0-4_kokkos-omp-serial_kk-blas-batched_teuchos-mpich_v1" ;;
serial) STAMP="trilinos-13.2.0-4_kokkos-serial_kk-blas-batched_clang14_v1" ;;
cuda)
  CUDA_ARCH=${EINREL_CUDA_ARCH:-AMPERE80}
  [[ $CUDA_ARCH =~ ^(TURING75|AMPERE80|AMPERE86|HOPPER90)$ ]] || {
    echo "[einrel-deps] error: EINREL_CUDA_ARCH=${CUDA_ARCH} is not one of TURING75, AMPERE80, AMPERE86, HOPPER90" >&2
    exit 2
  }
  readonly CUDA_ARCH CUDA_SM="sm_${CUDA_ARCH: -2}"
  STAMP="trilinos-13.2.0-4_kokkos-cuda-${CUDA_SM/_/}-omp-serial_kk-blas-batched-cublas_v1"
  ;;
*) echo "[einrel-deps] error: unknown backend '${backend}' (openmp, serial or cuda)" >&2; exit 2 ;;
esac
readonly STAMP backend
readonly DEPS_ROOT="${EINREL_DEPS_ROOT:-/opt/einrel-deps}"
readonly PREFIX="${DEPS_ROOT}/${STAMP}"
readonly CACHE="${EINREL_DEPS_CACHE:-/var/cache/einrel-deps}"
readonly JOBS="${EINREL_DEPS_JOBS:-$(nproc)}"

readonly APT_PACKAGES=(
  build-essential cmake pkg-config dpkg-dev gfortran
  mpich libmpich-dev libhdf5-mpich-dev hdf5-tools
  libopenblas-dev libopenblas0-openmp libscalapack-mpich-dev scalapack-mpi-test
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-numpy python3-h5py graphviz clang-format gdb
)
# The sanitizer and fuzzing build: clang, its AddressSanitizer/UBSan/libFuzzer runtimes and the symbolizer.
readonly SERIAL_APT_PACKAGES=(clang-14 libclang-rt-14-dev llvm-14)
# The cuda backend patches Kokkos; the CUDA toolkit itself is not a Debian package (find_cuda).
readonly CUDA_APT_PACKAGES=(patch)

# Patches for Kokkos 3.4 with CUDA 13, applied in this order (patch -p1 in the copied trilinos tree).
PATCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/patches"
readonly PATCH_DIR
readonly CUDA_PATCHES=(
  kokkos-3.4-nvcc-wrapper-default-arch.patch
  kokkos-3.4-cuda12-half-conversions.patch
  kokkos-3.4-cuda13-memlocation.patch
  kokkos-3.4-cuda13-graph-edge-data.patch
  kokkos-3.4-hopper90-arch.patch
)

# What the build should use as CMAKE_PREFIX_PATH.
prefix_path() {
  if [[ $backend == serial || $backend == cuda ]]; then
    echo "${PREFIX};$(bash "${BASH_SOURCE[0]}" --backend openmp --print-prefix)"
  else
    echo "${PREFIX}"
  fi
}

if [[ $print_prefix == 1 ]]; then
  prefix_path
  exit 0
fi

say() { echo "[einrel-deps] $*" >&2; }
die() {
  echo "[einrel-deps] error: $*" >&2
  exit 1
}

require_root() {
  [[ $(id -u) -eq 0 ]] || die "$1 needs root (run as root or with sudo); nothing was changed"
}

missing_apt_packages() {
  local p status packages=("${APT_PACKAGES[@]}")
  [[ $backend == serial ]] && packages+=("${SERIAL_APT_PACKAGES[@]}")
  [[ $backend == cuda ]] && packages+=("${CUDA_APT_PACKAGES[@]}")
  for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || echo "$p"
  done
}

apt_update() {
  # --error-on=any: a mirror that cannot be reached is an error, not a warning.
  if ! apt-get update -q --error-on=any >"${CACHE}/apt-update.log" 2>&1; then
    tail -5 "${CACHE}/apt-update.log" >&2
    die "cannot reach the Debian package archive (apt-get update failed; log: ${CACHE}/apt-update.log)"
  fi
}

install_apt_packages() {
  local missing
  mapfile -t missing < <(missing_apt_packages)
  if [[ ${#missing[@]} -eq 0 ]]; then
    say "Debian packages: all present"
    return
  fi
  require_root "installing Debian packages (${missing[*]})"
  say "Debian packages: installing ${missing[*]}"
  apt_update
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
    >"${CACHE}/apt-install.log" 2>&1; then
    tail -20 "${CACHE}/apt-install.log" >&2
    die "apt-get install failed (log: ${CACHE}/apt-install.log)"
  fi
}

enable_deb_src() {
  local list=/etc/apt/sources.list.d/einrel-deb-src.sources
  [[ -f "$list" ]] && return
  local codename
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME}")
  [[ -n "$codename" ]] || die "cannot tell the Debian suite from /etc/os-release"
  say "enabling deb-src for ${codename} (${list})"
  cat >"$list" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: ${codename}
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  apt_update
}

fetch_trilinos_source() {
  local srcdir
  srcdir=$(find "${CACHE}/src" -maxdepth 1 -type d -name 'trilinos-13.2.0*' 2>/dev/null | head -n 1)
  if [[ -n "$srcdir" && -f "${srcdir}/.einrel-extracted" ]]; then
    echo "$srcdir"
    return
  fi
  require_root "fetching Debian's trilinos source package"
  enable_deb_src
  rm -rf "${CACHE}/src"
  mkdir -p "${CACHE}/src"
  say "downloading Debian's trilinos source package (~166 MB)"
  local fetch='cd "${CACHE}/src" && apt-get source -q trilinos=13.2.0-4 >"${CACHE}/apt-source.log" 2>&1'
  # Package lists may be older than the deb-src entry: refresh once before giving up.
  if ! (eval "$fetch") && ! { apt_update && (eval "$fetch"); }; then
    tail -5 "${CACHE}/apt-source.log" >&2
    die "apt-get source trilinos failed (log: ${CACHE}/apt-source.log)"
  fi
  srcdir=$(find "${CACHE}/src" -maxdepth 1 -type d -name 'trilinos-13.2.0*' | head -n 1)
  [[ -n "$srcdir" ]] || die "trilinos source tree not found after apt-get source"
  # The upstream tarball is only needed for extraction.
  rm -f "${CACHE}"/src/*.tar.* "${CACHE}"/src/*.dsc
  touch "${srcdir}/.einrel-extracted"
  echo "$srcdir"
}

# build_step NAME SOURCE_DIR CMAKE_ARGS...: configure, build and install one package, once.
build_step() {
  local name=$1 src=$2
  shift 2
  local done_marker="${PREFIX}/.einrel-${name}-installed"
  if [[ -f "$done_marker" ]]; then
    say "${name}: installed"
    return
  fi
  local build="${CACHE}/build/${STAMP}/${name}" log="${CACHE}/build/${STAMP}/${name}.log"
  rm -rf "$build"
  mkdir -p "$build"
  local t0=$SECONDS
  say "${name}: configuring, building and installing into ${PREFIX} (log: ${log})"
  if ! { cmake -S "$src" -B "$build" -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_STANDARD=17 -DCMAKE_CXX_EXTENSIONS=OFF -DBUILD_SHARED_LIBS=ON \
    -DCMAKE_INSTALL_RPATH="${PREFIX}/lib" "$@" &&
    cmake --build "$build" --parallel "$JOBS" && cmake --install "$build"; } >"$log" 2>&1; then
    tail -30 "$log" >&2
    die "${name}: build failed (log: ${log})"
  fi
  touch "$done_marker"
  rm -rf "$build"
  say "${name}: done in $((SECONDS - t0)) s"
}

openblas_library() {
  local blas=/usr/lib/x86_64-linux-gnu/libopenblas.so
  [[ -e "$blas" ]] || blas=$(find /usr/lib -name 'libopenblas.so' | head -n 1)
  [[ -n "$blas" ]] || die "libopenblas.so not found (is libopenblas-dev installed?)"
  echo "$blas"
}

# build_kokkos_kernels SOURCE COMPILER EXECSPACE [CMAKE_ARGS...]: Kokkos Kernels' BLAS and BATCHED on the
# prefix's Kokkos. Explicit instantiation only for the most common combination (double, LayoutLeft,
# EXECSPACE); everything else is instantiated from headers where einrel uses it.
build_kokkos_kernels() {
  local src=$1 compiler=$2 execspace=$3 blas
  shift 3
  blas=$(openblas_library)
  local on_openmp=OFF on_serial=OFF
  [[ $execspace == OPENMP ]] && on_openmp=ON
  [[ $execspace == SERIAL ]] && on_serial=ON
  build_step kokkos-kernels "${src}/packages/kokkos-kernels" \
    -DCMAKE_CXX_COMPILER="$compiler" -DKokkos_ROOT="$PREFIX" \
    -DKokkosKernels_ENABLED_COMPONENTS="BLAS;BATCHED" \
    -DKokkosKernels_ENABLE_TESTS=OFF -DKokkosKernels_ENABLE_EXAMPLES=OFF \
    -DKokkosKernels_INST_DOUBLE=ON -DKokkosKernels_INST_FLOAT=OFF \
    -DKokkosKernels_INST_COMPLEX_DOUBLE=OFF -DKokkosKernels_INST_COMPLEX_FLOAT=OFF \
    -DKokkosKernels_INST_LAYOUTLEFT=ON -DKokkosKernels_INST_LAYOUTRIGHT=OFF \
    -DKokkosKernels_INST_EXECSPACE_OPENMP=$on_openmp -DKokkosKernels_INST_EXECSPACE_SERIAL=$on_serial \
    -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_ORDINAL_INT64_T=OFF \
    -DKokkosKernels_INST_OFFSET_INT=OFF -DKokkosKernels_INST_OFFSET_SIZE_T=OFF \
    -DKokkosKernels_ENABLE_TPL_BLAS=ON -DBLAS_LIBRARIES=openblas -DBLAS_LIBRARY_DIRS="$(dirname "$blas")" \
    "$@"
}

build_openmp_parts() {
  local src=$1 blas
  blas=$(openblas_library)
  build_step kokkos "${src}/packages/kokkos" \
    -DCMAKE_CXX_COMPILER=g++ \
    -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF
  build_kokkos_kernels "$src" g++ OPENMP
  build_step teuchos "$src" \
    -DCMAKE_C_COMPILER=mpicc.mpich -DCMAKE_CXX_COMPILER=mpicxx.mpich \
    -DTPL_ENABLE_MPI=ON -DMPI_EXEC=mpiexec.mpich -DMPI_BASE_DIR=/usr \
    -DTrilinos_ENABLE_Fortran=OFF -DTrilinos_ENABLE_ALL_OPTIONAL_PACKAGES=OFF \
    -DTrilinos_ENABLE_Teuchos=ON -DTrilinos_ENABLE_Kokkos=OFF \
    -DTrilinos_ENABLE_TeuchosKokkosCompat=OFF -DTrilinos_ENABLE_TeuchosKokkosComm=OFF \
    -DTrilinos_ENABLE_TESTS=OFF -DTrilinos_ENABLE_EXAMPLES=OFF \
    -DTPL_BLAS_LIBRARIES="$blas" -DTPL_LAPACK_LIBRARIES="$blas"
}

build_serial_parts() {
  local src=$1
  build_step kokkos "${src}/packages/kokkos" \
    -DCMAKE_CXX_COMPILER=clang++-14 \
    -DKokkos_ENABLE_OPENMP=OFF -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF
  build_kokkos_kernels "$src" clang++-14 SERIAL
}

# find_cuda: the toolkit for --backend cuda, put first on PATH (nvcc_wrapper runs `nvcc`, or
# $CUDA_ROOT/bin/nvcc). Sets CUDA_DIR.
find_cuda() {
  CUDA_DIR=${EINREL_CUDA_HOME:-${CUDA_HOME:-/usr/local/cuda}}
  [[ -x "${CUDA_DIR}/bin/nvcc" ]] ||
    die "--backend cuda needs the CUDA toolkit and ${CUDA_DIR}/bin/nvcc does not exist: install the" \
      "toolkit (NVIDIA's, not a Debian package; 13.0 is tested) or set EINREL_CUDA_HOME or CUDA_HOME" \
      "to where it is (no GPU is needed)"
  compgen -G "${CUDA_DIR}/lib*/libcublas.so" >/dev/null ||
    die "--backend cuda needs cuBLAS, and ${CUDA_DIR}/lib*/libcublas.so does not exist"
  export PATH="${CUDA_DIR}/bin:${PATH}" CUDA_ROOT="$CUDA_DIR"
  say "CUDA toolkit: ${CUDA_DIR} ($("${CUDA_DIR}/bin/nvcc" --version | grep -o 'release [0-9.]*' || echo 'version unknown'))"
}

# patched_source SOURCE: a private copy of SOURCE's kokkos and kokkos-kernels packages (in the same layout)
# with CUDA_PATCHES applied; the other backends build from SOURCE itself, unpatched. Made again when the
# patches change (the marker holds their checksums); prints its root.
patched_source() {
  local src=$1 root="${CACHE}/patched/${STAMP}" log="${CACHE}/patched/${STAMP}.log" p sums
  sums=$(cd "$PATCH_DIR" && sha256sum "${CUDA_PATCHES[@]}") || die "patches missing in ${PATCH_DIR}"
  if [[ -f "${root}/.einrel-patched" && "$(cat "${root}/.einrel-patched")" == "$sums" ]]; then
    echo "$root"
    return
  fi
  rm -rf "$root"
  mkdir -p "${root}/packages"
  cp -a "${src}/packages/kokkos" "${src}/packages/kokkos-kernels" "${root}/packages/"
  : >"$log"
  for p in "${CUDA_PATCHES[@]}"; do
    say "patching Kokkos with ${p}"
    if ! patch -p1 --forward --batch --fuzz=0 -d "$root" -i "${PATCH_DIR}/${p}" >>"$log" 2>&1; then
      tail -20 "$log" >&2
      rm -rf "$root"
      die "${p} does not apply to ${src}/packages (log: ${log})"
    fi
  done
  echo "$sums" >"${root}/.einrel-patched"
  echo "$root"
}

build_cuda_parts() {
  local src=$1 patched
  patched=$(patched_source "$src")
  # The patched nvcc_wrapper goes into the prefix first, so that Kokkos' CMake package records the
  # compiler that stays (the one under EINREL_DEPS_CACHE may be deleted); Kokkos installs the same file.
  # Its default architecture (compiles without Kokkos' flags, CMake's compiler checks) is the prefix's.
  install -D -m 755 "${patched}/packages/kokkos/bin/nvcc_wrapper" "${PREFIX}/bin/nvcc_wrapper"
  sed -i "s/NVCC_WRAPPER_DEFAULT_ARCH:-\"sm_80\"/NVCC_WRAPPER_DEFAULT_ARCH:-\"${CUDA_SM}\"/" "${PREFIX}/bin/nvcc_wrapper"
  build_step kokkos "${patched}/packages/kokkos" \
    -DCMAKE_CXX_COMPILER="${PREFIX}/bin/nvcc_wrapper" -DCUDAToolkit_ROOT="$CUDA_DIR" \
    -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON "-DKokkos_ARCH_${CUDA_ARCH}=ON" \
    -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_TESTS=OFF
  sed -i "s/NVCC_WRAPPER_DEFAULT_ARCH:-\"sm_80\"/NVCC_WRAPPER_DEFAULT_ARCH:-\"${CUDA_SM}\"/" "${PREFIX}/bin/nvcc_wrapper"
  build_kokkos_kernels "$patched" "${PREFIX}/bin/nvcc_wrapper" CUDA \
    -DKokkosKernels_INST_EXECSPACE_CUDA=ON -DKokkosKernels_INST_MEMSPACE_CUDASPACE=ON \
    -DKokkosKernels_INST_MEMSPACE_CUDAUVMSPACE=OFF -DKokkosKernels_INST_MEMSPACE_HOSTSPACE=OFF \
    -DKokkosKernels_ENABLE_TPL_CUBLAS=ON -DKokkosKernels_ENABLE_TPL_CUSPARSE=OFF \
    -DCUDA_TOOLKIT_ROOT_DIR="$CUDA_DIR"
}

main() {
  local t0=$SECONDS
  [[ $backend == cuda ]] && find_cuda
  if [[ $backend == serial || $backend == cuda ]]; then
    bash "${BASH_SOURCE[0]}" --backend openmp >/dev/null  # Teuchos
  fi
  if [[ -f "${PREFIX}/.einrel-complete" && -z "$(missing_apt_packages)" ]]; then
    say "up to date (${PREFIX})"
    prefix_path
    return
  fi
  [[ -f /etc/debian_version ]] || die "this bootstrap is for Debian 12; on other systems install the packages listed in README.md yourself"
  mkdir -p "$CACHE" 2>/dev/null || require_root "creating ${CACHE}"
  install_apt_packages
  if [[ ! -f "${PREFIX}/.einrel-complete" ]]; then
    mkdir -p "$PREFIX" 2>/dev/null || require_root "creating ${PREFIX}"
    local src
    src=$(fetch_trilinos_source)
    "build_${backend}_parts" "$src"
    touch "${PREFIX}/.einrel-complete"
  fi
  say "ready in $((SECONDS - t0)) s (${PREFIX})"
  prefix_path
}

main
