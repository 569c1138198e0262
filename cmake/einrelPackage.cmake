# Installs the einrel::* targets with a relocatable einrelConfig.cmake that re-finds the dependencies
# the build used (their locations are recorded as hints, overridable by the consumer).
include(CMakePackageConfigHelpers)

install(EXPORT einrelTargets NAMESPACE einrel:: DESTINATION ${EINREL_INSTALL_CMAKEDIR})
install(EXPORT einrelCTargets NAMESPACE einrel:: DESTINATION ${EINREL_INSTALL_CMAKEDIR})
if(TARGET einrel_fortran)
  install(EXPORT einrelFortranTargets NAMESPACE einrel:: DESTINATION ${EINREL_INSTALL_CMAKEDIR})
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/einrelConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/einrelConfig.cmake
                              INSTALL_DESTINATION ${EINREL_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/einrelConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/einrelConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/einrelConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/einrelDependencies.cmake
        DESTINATION ${EINREL_INSTALL_CMAKEDIR})
include(einrelPkgConfig)
einrel_install_pkgconfig()
einrel_list_installed_headers()
