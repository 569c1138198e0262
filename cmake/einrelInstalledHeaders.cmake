# Installing over an older einrel: the headers it installed and this one does not must not stay behind, where a
# consumer could include them by mistake (docs/library.md, "Installing over an older version").
#   einrel_remove_old_headers()    before any header is installed: empties include/einrel/detail/ (einrel's own)
#                                  and removes every public header the last install listed
#   einrel_list_installed_headers() after every header is registered: installs that list, einrelHeaders.txt
#                                  (one file name of include/ per line) beside einrelConfig.cmake
function(einrel_remove_old_headers)
  install(CODE "
    set(_einrel_root \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}\")
    file(REMOVE_RECURSE \"\${_einrel_root}/${EINREL_INSTALL_DETAIL_INCLUDEDIR}\")
    set(_einrel_list \"\${_einrel_root}/${EINREL_INSTALL_CMAKEDIR}/einrelHeaders.txt\")
    if(EXISTS \"\${_einrel_list}\")
      file(STRINGS \"\${_einrel_list}\" _einrel_old)
      foreach(_einrel_header IN LISTS _einrel_old)
        file(REMOVE \"\${_einrel_root}/${CMAKE_INSTALL_INCLUDEDIR}/\${_einrel_header}\")
      endforeach()
    endif()")
endfunction()

function(einrel_list_installed_headers)
  get_property(public GLOBAL PROPERTY EINREL_PUBLIC_HEADERS)
  get_property(c_headers GLOBAL PROPERTY EINREL_PUBLIC_C_HEADERS)
  set(names "")
  foreach(header IN LISTS public c_headers)
    get_filename_component(name ${header} NAME)
    string(APPEND names "${name}\n")
  endforeach()
  if(TARGET einrel_fortran)
    string(APPEND names "einrel.mod\n")
  endif()
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/einrelHeaders.txt "${names}")
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/einrelHeaders.txt DESTINATION ${EINREL_INSTALL_CMAKEDIR})
endfunction()
