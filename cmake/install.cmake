# install.cmake - what `cmake --install` puts under the prefix: the headers,
# librelayout.so (relayout::relayout) and librelayout.a
# (relayout::relayout_static), the relayout command where built, a
# pkg-config file and a CMake package (find_package(relayout)).
include(CMakePackageConfigHelpers)
install(FILES include/relayout.h include/relayout_cl.h include/relayout_npy.h
        include/relayout_preprocess.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS relayout relayout_shared EXPORT relayoutTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
set(relayout_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/relayout)
install(EXPORT relayoutTargets NAMESPACE relayout::
        DESTINATION ${relayout_cmake_dir})
set(relayout_image_dependencies "")
set(relayout_image_pc "")
foreach(codec JPEG PNG)
  if(${codec}_FOUND)
    string(APPEND relayout_image_dependencies "find_dependency(${codec})\n")
  endif()
endforeach()
if(JPEG_FOUND)
  string(APPEND relayout_image_pc " -ljpeg")
endif()
if(PNG_FOUND)
  string(APPEND relayout_image_pc " -lpng")
endif()
configure_package_config_file(cmake/relayoutConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/relayoutConfig.cmake
  INSTALL_DESTINATION ${relayout_cmake_dir})
# 0.x: a minor version may change the API, so only the same minor matches
write_basic_package_version_file(
  ${CMAKE_CURRENT_BINARY_DIR}/relayoutConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/relayoutConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/relayoutConfigVersion.cmake
        DESTINATION ${relayout_cmake_dir})
# pkg-config: paths relative to the file, so that the prefix can move
file(RELATIVE_PATH relayout_pc_up /x/${CMAKE_INSTALL_LIBDIR}/pkgconfig /x)
configure_file(cmake/relayout.pc.in ${CMAKE_CURRENT_BINARY_DIR}/relayout.pc
               @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/relayout.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
