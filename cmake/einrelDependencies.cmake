# Finds einrel's dependencies. Used by the build and, installed next to einrelConfig.cmake, by every
# project that calls find_package(einrel), so both see the same Kokkos, Kokkos Kernels, Teuchos, MPI
# and HDF5.
#
# Hints: CMAKE_PREFIX_PATH or Kokkos_ROOT / KokkosKernels_ROOT / Teuchos_ROOT for the Kokkos stack,
# MPI_C_COMPILER, MPI_CXX_COMPILER and MPI_Fortran_COMPILER for MPI, HDF5_C_COMPILER_EXECUTABLE for parallel HDF5.

include_guard(GLOBAL)

# In a package config a missing dependency makes find_package(einrel) fail instead of stopping CMake.
macro(_einrel_require package)
  if(EINREL_FIND_FROM_CONFIG)
    include(CMakeFindDependencyMacro)
    find_dependency(${package} ${ARGN})
  else()
    find_package(${package} ${ARGN} REQUIRED)
  endif()
endmacro()

# MPI, for every language of the calling project among C, C++ and Fortran (a C-only or Fortran-only project
# that uses einrel::c or einrel::fortran needs no C++). Debian installs several MPIs side by side; Teuchos and
# parallel HDF5 are built against MPICH, so each language's compiler wrapper defaults to MPICH's (in a consumer:
# to the wrappers the build used, recorded in einrelConfig.cmake) and never to the first `mpif90` on the PATH,
# which on Debian is Open MPI's.
macro(einrel_find_mpi)
  foreach(_einrel_lang_wrapper "C;mpicc" "CXX;mpicxx" "Fortran;mpif90")
    list(GET _einrel_lang_wrapper 0 _einrel_lang)
    list(GET _einrel_lang_wrapper 1 _einrel_wrapper)
    if(NOT MPI_${_einrel_lang}_COMPILER AND EXISTS /usr/bin/${_einrel_wrapper}.mpich)
      set(MPI_${_einrel_lang}_COMPILER /usr/bin/${_einrel_wrapper}.mpich)
    endif()
  endforeach()
  if(NOT MPIEXEC_EXECUTABLE AND EXISTS /usr/bin/mpiexec.mpich)
    set(MPIEXEC_EXECUTABLE /usr/bin/mpiexec.mpich)
  endif()
  get_property(_einrel_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  set(_einrel_mpi_components)
  foreach(_einrel_lang C CXX Fortran)
    if(_einrel_lang IN_LIST _einrel_languages)
      list(APPEND _einrel_mpi_components ${_einrel_lang})
    endif()
  endforeach()
  _einrel_require(MPI COMPONENTS ${_einrel_mpi_components})
  # The launcher that matches this MPI, by the name users type: docs, the foreign-launcher error and the
  # configure summary give it. Not resolved through links: Debian's mpiexec.mpich links to mpiexec.hydra,
  # and its bare mpiexec is Open MPI's once an Open MPI package (e.g. for ScaLAPACK) is installed.
  if(MPIEXEC_EXECUTABLE)
    get_filename_component(EINREL_MPI_LAUNCHER "${MPIEXEC_EXECUTABLE}" NAME)
  else()
    set(EINREL_MPI_LAUNCHER mpiexec)
  endif()
endmacro()

# The C++ stack under einrel's C++ targets: Kokkos, Kokkos Kernels, a BLAS, Teuchos, parallel HDF5 (and MPI).
macro(einrel_find_dependencies)
  einrel_find_mpi()
  _einrel_require(Kokkos 3.4)
  set(EINREL_KOKKOS_BACKENDS)
  foreach(_einrel_backend Serial OpenMP Cuda HIP SYCL)
    string(TOUPPER ${_einrel_backend} _einrel_upper)
    if(${_einrel_upper} IN_LIST Kokkos_DEVICES)
      list(APPEND EINREL_KOKKOS_BACKENDS ${_einrel_backend})
    endif()
  endforeach()
  if(NOT EINREL_KOKKOS_BACKENDS)
    message(FATAL_ERROR "einrel: Kokkos at ${Kokkos_DIR} enables none of Serial, OpenMP, Cuda, HIP, SYCL "
                        "(Kokkos_DEVICES='${Kokkos_DEVICES}')")
  endif()

  _einrel_require(KokkosKernels)
  # Kokkos Kernels 3.x exports Kokkos::kokkoskernels, 4.x also KokkosKernels::kokkoskernels.
  if(TARGET Kokkos::kokkoskernels)
    set(EINREL_KOKKOSKERNELS_TARGET Kokkos::kokkoskernels)
  elseif(TARGET KokkosKernels::kokkoskernels)
    set(EINREL_KOKKOSKERNELS_TARGET KokkosKernels::kokkoskernels)
  else()
    message(FATAL_ERROR "einrel: KokkosKernels found at ${KokkosKernels_DIR} defines neither "
                        "Kokkos::kokkoskernels nor KokkosKernels::kokkoskernels")
  endif()

  # With Kokkos' OpenMP backend the BLAS under Kokkos Kernels should run on the same OpenMP threads:
  # OpenBLAS' pthread build keeps threads of its own spinning next to Kokkos' and, on 2 cores, halved
  # the speed of contractions that pack an operand (docs/benchmarks.md). Debian installs both builds
  # side by side (libopenblas0-openmp); linking the OpenMP one by path, ahead of Kokkos Kernels, makes
  # it the libopenblas.so.0 the whole process binds to. Set EINREL_OPENMP_BLAS_LIBRARY to another
  # library, or to an empty string to keep whatever BLAS Kokkos Kernels was linked with.
  if(NOT EINREL_FIND_FROM_CONFIG AND NOT DEFINED EINREL_OPENMP_BLAS_LIBRARY)
    set(_einrel_openmp_blas "")
    if(OpenMP IN_LIST EINREL_KOKKOS_BACKENDS AND CMAKE_LIBRARY_ARCHITECTURE AND
       EXISTS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp/libopenblas.so.0)
      set(_einrel_openmp_blas /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp/libopenblas.so.0)
    endif()
    set(EINREL_OPENMP_BLAS_LIBRARY "${_einrel_openmp_blas}" CACHE STRING
        "OpenMP-threaded BLAS linked ahead of Kokkos Kernels (empty: none)")
  endif()
  if(NOT TARGET einrel_blas_threads)
    add_library(einrel_blas_threads INTERFACE IMPORTED)
    if(EINREL_OPENMP_BLAS_LIBRARY)
      # Handed to the linker as flags (CMake would otherwise warn that this libopenblas.so.0 hides the
      # system one when it orders run paths); --no-as-needed because einrel reaches BLAS only through
      # Kokkos Kernels, yet the entry must stay. A target with EINREL_HOST_BLAS set (libeinrel_scalapack,
      # loaded into a host program that has its BLAS already) links none: the process keeps the host's.
      get_filename_component(_einrel_blas_dir "${EINREL_OPENMP_BLAS_LIBRARY}" DIRECTORY)
      set(_einrel_own_blas "$<NOT:$<BOOL:$<TARGET_PROPERTY:EINREL_HOST_BLAS>>>")
      set_target_properties(einrel_blas_threads PROPERTIES
        INTERFACE_LINK_LIBRARIES
          "$<${_einrel_own_blas}:-Wl,--push-state,--no-as-needed,${EINREL_OPENMP_BLAS_LIBRARY},--pop-state>"
        INTERFACE_LINK_OPTIONS "$<${_einrel_own_blas}:-Wl,-rpath,${_einrel_blas_dir}>")
    endif()
  endif()

  _einrel_require(Teuchos)
  if(NOT TARGET einrel_teuchos_deps)
    # Teuchos' config lists its libraries as target names; one interface target carries them.
    add_library(einrel_teuchos_deps INTERFACE IMPORTED)
    set_target_properties(einrel_teuchos_deps PROPERTIES
      INTERFACE_LINK_LIBRARIES "${Teuchos_LIBRARIES};${Teuchos_TPL_LIBRARIES}"
      INTERFACE_INCLUDE_DIRECTORIES "${Teuchos_INCLUDE_DIRS};${Teuchos_TPL_INCLUDE_DIRS}")
  endif()

  # Parallel HDF5. A consumer reuses the libraries recorded by the build (FindHDF5 would need the C
  # language enabled in the consumer's project).
  if(NOT EINREL_FIND_FROM_CONFIG)
    if(NOT HDF5_C_COMPILER_EXECUTABLE AND EXISTS /usr/bin/h5pcc.mpich)
      set(HDF5_C_COMPILER_EXECUTABLE /usr/bin/h5pcc.mpich)
    endif()
    set(HDF5_PREFER_PARALLEL ON)
    find_package(HDF5 REQUIRED COMPONENTS C)
    if(NOT HDF5_IS_PARALLEL)
      message(FATAL_ERROR "einrel: HDF5 at '${HDF5_INCLUDE_DIRS}' is a serial build; einrel needs parallel "
                          "HDF5 built with the same MPI (Debian: libhdf5-mpich-dev; or set "
                          "HDF5_C_COMPILER_EXECUTABLE to its h5pcc)")
    endif()
    set(EINREL_HDF5_LIBRARIES ${HDF5_C_LIBRARIES})
    set(EINREL_HDF5_INCLUDE_DIRS ${HDF5_C_INCLUDE_DIRS})
  endif()
  if(NOT TARGET einrel_hdf5_deps)
    add_library(einrel_hdf5_deps INTERFACE IMPORTED)
    set_target_properties(einrel_hdf5_deps PROPERTIES INTERFACE_LINK_LIBRARIES "${EINREL_HDF5_LIBRARIES}"
                                                      INTERFACE_INCLUDE_DIRECTORIES "${EINREL_HDF5_INCLUDE_DIRS}")
  endif()

  # Optional peer for the benchmarks: ScaLAPACK built with the same MPI.
  if(NOT EINREL_FIND_FROM_CONFIG)
    find_library(EINREL_SCALAPACK_LIBRARY NAMES scalapack-mpich scalapack
                 DOC "ScaLAPACK for the pdgemm comparison in perf_tests/")
  endif()
endmacro()
