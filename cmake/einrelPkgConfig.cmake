# pkg-config files for builds without CMake (most Fortran and many C simulation codes use Makefiles):
#   einrel-c.pc        the C API: einrel.h and libeinrel_c.so
#   einrel-fortran.pc  the Fortran module: einrel.mod and libeinrel_fortran.so (where it is built)
#   einrel.pc          the C++ library API (einrel.hpp, einrel::Program): einrel's static libraries and the
#                      flags of Kokkos, Kokkos Kernels, its BLAS and MPI, taken from the CMake targets
# Each also names the MPI compiler wrappers and launcher einrel was built with (variables mpicc, mpicxx, mpifort,
# mpiexec), so that a Makefile compiles with the same MPI: `$(shell pkg-config --variable=mpicc einrel-c)`.
# The files locate the installation from their own folder (${pcfiledir}), so the installed tree can move.
include_guard(GLOBAL)

# A target property as the list a non-CMake build needs: the C++ language, link-only and install-interface
# wrappers unwrapped (whatever list they hold), then every entry still holding a generator expression
# dropped: $<BUILD_INTERFACE:...> and what only einrel's own build uses (the BLAS einrel links by flags is
# added by the caller); system include folders left to the compiler; a bare library name made -l<name>.
function(_einrel_pc_property target property out)
  get_target_property(values ${target} ${property})
  if(NOT values)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  string(REGEX REPLACE "\\$<(\\$<(COMPILE|LINK)_LANGUAGE:CXX>|LINK_ONLY|INSTALL_INTERFACE):([^<>]*)>" "\\3" values
                       "${values}")
  set(plain)
  foreach(value IN LISTS values)
    if(value MATCHES "\\$<|NOTFOUND$" OR value STREQUAL "/usr/include")
      continue()
    endif()
    if(property STREQUAL "INTERFACE_LINK_LIBRARIES" AND NOT TARGET "${value}" AND value MATCHES "^[A-Za-z0-9_.+-]+$"
       AND NOT value MATCHES "^-")
      set(value "-l${value}")
    endif()
    list(APPEND plain "${value}")
  endforeach()
  set(${out} "${plain}" PARENT_SCOPE)
endfunction()

# The file an imported target stands for, in the configuration einrel was built with.
function(_einrel_pc_imported_file target out)
  set(file "")
  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  foreach(property IMPORTED_LOCATION_${config} IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_NOCONFIG
                   IMPORTED_LOCATION)
    get_target_property(candidate ${target} ${property})
    if(candidate AND NOT file)
      set(file "${candidate}")
    endif()
  endforeach()
  set(${out} "${file}" PARENT_SCOPE)
endfunction()

# Depth-first walk over target's link dependencies: appends, after a target's dependencies, its library to
# _einrel_pc_links (reversed by the caller: dependents before dependencies, as static linking needs) and its
# include folders, definitions and options to _einrel_pc_cflags.
function(_einrel_pc_walk target)
  get_property(seen GLOBAL PROPERTY _einrel_pc_seen)
  if(target IN_LIST seen)
    return()
  endif()
  set_property(GLOBAL APPEND PROPERTY _einrel_pc_seen ${target})
  get_target_property(type ${target} TYPE)
  get_target_property(imported ${target} IMPORTED)
  set(dependencies)
  if(NOT imported AND NOT type STREQUAL "INTERFACE_LIBRARY")
    _einrel_pc_property(${target} LINK_LIBRARIES dependencies)
  endif()
  _einrel_pc_property(${target} INTERFACE_LINK_LIBRARIES interface)
  list(APPEND dependencies ${interface})
  foreach(dependency IN LISTS dependencies)
    if(TARGET ${dependency})
      get_target_property(aliased ${dependency} ALIASED_TARGET)
      if(aliased)
        set(dependency ${aliased})
      endif()
      _einrel_pc_walk(${dependency})
    else()
      set_property(GLOBAL APPEND PROPERTY _einrel_pc_links "${dependency}")
    endif()
  endforeach()
  if(imported)
    foreach(property_prefix "INTERFACE_INCLUDE_DIRECTORIES;-I" "INTERFACE_COMPILE_DEFINITIONS;-D"
                            "INTERFACE_COMPILE_OPTIONS;")
      list(GET property_prefix 0 property)
      list(LENGTH property_prefix n)
      set(prefix "")
      if(n GREATER 1)
        list(GET property_prefix 1 prefix)
      endif()
      _einrel_pc_property(${target} ${property} values)
      foreach(value IN LISTS values)
        set_property(GLOBAL APPEND PROPERTY _einrel_pc_cflags "${prefix}${value}")
      endforeach()
    endforeach()
    _einrel_pc_property(${target} INTERFACE_LINK_OPTIONS options)
    foreach(option IN LISTS options)
      if(NOT option MATCHES "^-D")
        set_property(GLOBAL APPEND PROPERTY _einrel_pc_links "${option}")
      endif()
    endforeach()
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      _einrel_pc_imported_file(${target} file)
      set_property(GLOBAL APPEND PROPERTY _einrel_pc_links "${file}")
    endif()
  elseif(type STREQUAL "STATIC_LIBRARY" OR type STREQUAL "SHARED_LIBRARY")
    get_target_property(name ${target} OUTPUT_NAME)
    if(NOT name)
      set(name ${target})
    endif()
    set_property(GLOBAL APPEND PROPERTY _einrel_pc_links "-l${name}")
  endif()
endfunction()

# Sets out_cflags and out_libs to the flags that compile and link a C++ file against `target`.
function(_einrel_pc_flags target out_cflags out_libs)
  set_property(GLOBAL PROPERTY _einrel_pc_seen)
  set_property(GLOBAL PROPERTY _einrel_pc_links)
  set_property(GLOBAL PROPERTY _einrel_pc_cflags)
  _einrel_pc_walk(${target})
  get_property(links GLOBAL PROPERTY _einrel_pc_links)
  get_property(cflags GLOBAL PROPERTY _einrel_pc_cflags)
  list(REVERSE links)
  list(REMOVE_DUPLICATES links)  # keeps the first: each library stays ahead of what it needs
  list(REMOVE_DUPLICATES cflags)
  string(REPLACE ";" " " links "${links}")
  string(REPLACE ";" " " cflags "${cflags}")
  set(${out_cflags} "${cflags}" PARENT_SCOPE)
  set(${out_libs} "${links}" PARENT_SCOPE)
endfunction()

function(einrel_install_pkgconfig)
  set(mpicc "${MPI_C_COMPILER}")
  set(mpicxx "${MPI_CXX_COMPILER}")
  set(mpifort "${MPI_Fortran_COMPILER}")
  set(mpiexec "${MPIEXEC_EXECUTABLE}")
  set(version "${PROJECT_VERSION}")
  file(RELATIVE_PATH to_prefix "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" to_prefix "${to_prefix}")
  set(header "prefix=\${pcfiledir}/${to_prefix}
libdir=\${prefix}/${CMAKE_INSTALL_LIBDIR}
includedir=\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}
mpicc=${mpicc}
mpicxx=${mpicxx}
mpifort=${mpifort}
mpiexec=${mpiexec}
")
  set(rpath "-Wl,-rpath,\${libdir}")
  set(pc_dir ${CMAKE_CURRENT_BINARY_DIR}/pkgconfig)
  file(WRITE ${pc_dir}/einrel-c.pc "${header}
Name: einrel-c
Description: einrel's C API (einrel.h); compile with the MPI C wrapper named by the variable mpicc
Version: ${version}
Cflags: -I\${includedir}
Libs: -L\${libdir} -leinrel_c ${rpath}
")
  set(files ${pc_dir}/einrel-c.pc)
  if(TARGET einrel_fortran)
    file(WRITE ${pc_dir}/einrel-fortran.pc "${header}
Name: einrel-fortran
Description: einrel's Fortran module (use einrel); compile with the MPI Fortran wrapper named by the variable mpifort
Version: ${version}
Cflags: -I\${includedir}
Libs: -L\${libdir} -leinrel_fortran -leinrel_c ${rpath}
")
    list(APPEND files ${pc_dir}/einrel-fortran.pc)
  endif()
  _einrel_pc_flags(einrel_engine cflags libs)
  set(blas "")
  if(EINREL_OPENMP_BLAS_LIBRARY)
    get_filename_component(blas_dir "${EINREL_OPENMP_BLAS_LIBRARY}" DIRECTORY)
    set(blas "-Wl,--push-state,--no-as-needed,${EINREL_OPENMP_BLAS_LIBRARY},--pop-state -Wl,-rpath,${blas_dir}")
  endif()
  set(kokkos_rpath "")
  set(dirs)
  foreach(library IN LISTS Kokkos_DIR KokkosKernels_DIR)
    get_filename_component(dir "${library}/../.." ABSOLUTE)  # <prefix>/lib/cmake/Kokkos -> <prefix>/lib
    list(APPEND dirs ${dir})
  endforeach()
  list(REMOVE_DUPLICATES dirs)
  foreach(dir IN LISTS dirs)
    string(APPEND kokkos_rpath " -Wl,-rpath,${dir}")
  endforeach()
  file(WRITE ${pc_dir}/einrel.pc "${header}
Name: einrel
Description: einrel's C++ library API (einrel.hpp: einrel::Program, einrel::Graph); compile with the MPI C++ wrapper named by the variable mpicxx
Version: ${version}
Cflags: -std=c++17 -I\${includedir} -I\${includedir}/einrel/detail ${cflags}
Libs: -L\${libdir} ${blas} ${libs} ${rpath}${kokkos_rpath}
")
  list(APPEND files ${pc_dir}/einrel.pc)
  install(FILES ${files} DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
