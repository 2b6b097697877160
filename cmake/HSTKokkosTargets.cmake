# Normalises the Kokkos and Kokkos Kernels imports into HST::Kokkos and
# HST::KokkosKernels. Expects find_package(Kokkos) and
# find_package(KokkosKernels) to have run. Used by the build tree and by the
# installed HSTConfig.cmake.
#
# Standalone installs export Kokkos::kokkos and Kokkos::kokkoskernels (or
# KokkosKernels::kokkoskernels); those are used when present and sane.
# Debian's Trilinos packaging exports a Kokkos::kokkos whose include directory
# (/usr/lib/include) does not exist and no Kokkos Kernels target but
# trilinos_kokkoskernels; there we fall back to the <Pkg>_LIBRARIES and
# <Pkg>_INCLUDE_DIRS variables of the TriBITS config files.

if(TARGET HST::Kokkos AND TARGET HST::KokkosKernels)
  return()
endif()

if(NOT Kokkos_FOUND)
  message(FATAL_ERROR "HST: find_package(Kokkos) must run before including ${CMAKE_CURRENT_LIST_FILE}")
endif()
if(Kokkos_VERSION VERSION_LESS 3.4)
  message(FATAL_ERROR "HST needs Kokkos >= 3.4, found ${Kokkos_VERSION} in ${Kokkos_DIR}")
endif()

function(_hst_imported_target_is_usable target result)
  set(usable FALSE)
  if(TARGET ${target})
    set(usable TRUE)
    get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
    if(dirs)
      foreach(dir IN LISTS dirs)
        if(NOT dir MATCHES "\\$<" AND NOT EXISTS "${dir}")
          set(usable FALSE)
        endif()
      endforeach()
    endif()
  endif()
  set(${result} ${usable} PARENT_SCOPE)
endfunction()

function(_hst_make_target name package)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "TARGETS")
  add_library(${name} INTERFACE IMPORTED GLOBAL)
  foreach(target IN LISTS arg_TARGETS)
    _hst_imported_target_is_usable(${target} usable)
    if(usable)
      target_link_libraries(${name} INTERFACE ${target})
      set(_hst_${package}_source "target ${target}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  if(NOT ${package}_LIBRARIES OR NOT ${package}_INCLUDE_DIRS)
    message(FATAL_ERROR
      "HST: no usable ${package} target (tried ${arg_TARGETS}) and no "
      "${package}_LIBRARIES/${package}_INCLUDE_DIRS to fall back on (${package}_DIR=${${package}_DIR})")
  endif()
  set(include_dirs)
  foreach(dir IN LISTS ${package}_INCLUDE_DIRS)
    get_filename_component(dir "${dir}" ABSOLUTE)
    list(APPEND include_dirs "${dir}")
  endforeach()
  list(REMOVE_DUPLICATES include_dirs)
  target_include_directories(${name} SYSTEM INTERFACE ${include_dirs})
  target_link_libraries(${name} INTERFACE ${${package}_LIBRARIES})
  set(_hst_${package}_source "${package}_LIBRARIES (${${package}_LIBRARIES}), include ${include_dirs}"
      PARENT_SCOPE)
endfunction()

if(NOT TARGET HST::Kokkos)
  _hst_make_target(HST::Kokkos Kokkos TARGETS Kokkos::kokkos)
endif()
if(NOT TARGET HST::KokkosKernels)
  _hst_make_target(HST::KokkosKernels KokkosKernels
                   TARGETS Kokkos::kokkoskernels KokkosKernels::kokkoskernels)
  target_link_libraries(HST::KokkosKernels INTERFACE HST::Kokkos)
endif()

if(NOT HST_FIND_QUIETLY)
  if(KokkosKernels_VERSION)
    set(_hst_kk_version "${KokkosKernels_VERSION}")
  else()
    set(_hst_kk_version "unknown (no version file)")
  endif()
  message(STATUS "HST: Kokkos ${Kokkos_VERSION}, devices: ${Kokkos_DEVICES}, via ${_hst_Kokkos_source}")
  message(STATUS "HST: Kokkos Kernels ${_hst_kk_version}, via ${_hst_KokkosKernels_source}")
  unset(_hst_kk_version)
endif()
unset(_hst_Kokkos_source)
unset(_hst_KokkosKernels_source)
