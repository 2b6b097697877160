# Normalises the Kokkos and Kokkos Kernels imports into HST::Kokkos and
# HST::KokkosKernels. Expects find_package(Kokkos) and
# find_package(KokkosKernels) to have run. Used by the build tree and by the
# installed HSTConfig.cmake.
#
# When the Kokkos or Kokkos Kernels found cannot be used (Kokkos older than
# 3.4, a Kokkos Kernels of another Kokkos), it defines no target and sets
# HST_KOKKOS_ERROR to the reason: the build tree stops on it, HSTConfig.cmake
# reports HST as not found.
#
# Standalone installs export Kokkos::kokkos and Kokkos::kokkoskernels (or
# KokkosKernels::kokkoskernels); those are used when present and sane.
# Debian's Trilinos packaging (TriBITS) exports a Kokkos::kokkos whose include
# directory (/usr/lib/include) does not exist and no Kokkos Kernels target but
# trilinos_kokkoskernels. There the broken target still carries what Kokkos
# needs its users to compile with (INTERFACE_COMPILE_OPTIONS: -fopenmp for
# OpenMP, the CUDA flags; INTERFACE_COMPILE_FEATURES; the link options): those
# are kept, and only the include directories (and, without a target, the
# libraries) come from the <Pkg>_INCLUDE_DIRS and <Pkg>_LIBRARIES variables of
# the TriBITS config files.

unset(HST_KOKKOS_ERROR)
if(TARGET HST::Kokkos AND TARGET HST::KokkosKernels)
  return()
endif()

if(NOT Kokkos_FOUND)
  message(FATAL_ERROR "HST: find_package(Kokkos) must run before including ${CMAKE_CURRENT_LIST_FILE}")
endif()
# Kokkos ships SameMajorVersion version files: a minimum cannot be asked of
# find_package, it is checked here.
if(Kokkos_VERSION VERSION_LESS 3.4)
  set(HST_KOKKOS_ERROR "HST needs Kokkos >= 3.4, found ${Kokkos_VERSION} in ${Kokkos_DIR}")
  return()
endif()

# Kokkos Kernels must be built on the Kokkos found: same version line (Kokkos
# Kernels is numbered after the Kokkos it goes with) and same backends (a
# standalone Kokkos Kernels config re-declares the Kokkos_ENABLE_<DEVICE> it
# was built with; Kokkos_DEVICES is the Kokkos found). A TriBITS Kokkos
# Kernels has no version file: it must come from the same Trilinos install.
string(REGEX MATCH "^[0-9]+\\.[0-9]+" _hst_kokkos_line "${Kokkos_VERSION}")
if(KokkosKernels_VERSION)
  string(REGEX MATCH "^[0-9]+\\.[0-9]+" _hst_kk_line "${KokkosKernels_VERSION}")
  if(NOT _hst_kk_line VERSION_EQUAL _hst_kokkos_line)
    string(CONCAT HST_KOKKOS_ERROR
           "HST: Kokkos Kernels ${KokkosKernels_VERSION} (${KokkosKernels_DIR}) does not go "
           "with Kokkos ${Kokkos_VERSION} (${Kokkos_DIR}): use the Kokkos Kernels built on "
           "that Kokkos (set KokkosKernels_ROOT / Kokkos_ROOT to one install tree)")
    return()
  endif()
elseif(KokkosKernels_PACKAGE_LIST)
  if(NOT "KokkosCore" IN_LIST KokkosKernels_PACKAGE_LIST OR NOT Kokkos_INSTALL_DIR
     OR NOT KokkosKernels_INSTALL_DIR STREQUAL Kokkos_INSTALL_DIR)
    string(CONCAT HST_KOKKOS_ERROR
           "HST: Kokkos Kernels from the Trilinos installed in '${KokkosKernels_INSTALL_DIR}' "
           "(${KokkosKernels_DIR}) but Kokkos from '${Kokkos_INSTALL_DIR}' (${Kokkos_DIR}): "
           "use the Kokkos of that Trilinos")
    return()
  endif()
elseif(NOT HST_FIND_QUIETLY)
  message(WARNING "HST: Kokkos Kernels (${KokkosKernels_DIR}) states no version; "
                  "cannot check that it was built on Kokkos ${Kokkos_VERSION} (${Kokkos_DIR})")
endif()
foreach(_hst_device IN ITEMS SERIAL OPENMP CUDA HIP)
  set(_hst_in_kokkos FALSE)
  if(_hst_device IN_LIST Kokkos_DEVICES)
    set(_hst_in_kokkos TRUE)
  endif()
  set(_hst_in_kernels FALSE)
  if(Kokkos_ENABLE_${_hst_device})
    set(_hst_in_kernels TRUE)
  endif()
  if(NOT _hst_in_kokkos STREQUAL _hst_in_kernels)
    if(_hst_in_kernels)
      set(_hst_in_kernels "with")
    else()
      set(_hst_in_kernels "without")
    endif()
    string(CONCAT HST_KOKKOS_ERROR
           "HST: the Kokkos found (${Kokkos_DIR}) has the devices ${Kokkos_DEVICES}, but "
           "Kokkos Kernels (${KokkosKernels_DIR}) was built on a Kokkos ${_hst_in_kernels} "
           "${_hst_device}: use the Kokkos Kernels built on that Kokkos")
    return()
  endif()
endforeach()
unset(_hst_device)
unset(_hst_in_kokkos)
unset(_hst_in_kernels)
unset(_hst_kokkos_line)
unset(_hst_kk_line)

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
  set(broken)
  foreach(target IN LISTS arg_TARGETS)
    _hst_imported_target_is_usable(${target} usable)
    if(usable)
      target_link_libraries(${name} INTERFACE ${target})
      set(_hst_${package}_source "target ${target}" PARENT_SCOPE)
      return()
    endif()
    if(TARGET ${target} AND NOT broken)
      set(broken ${target})
    endif()
  endforeach()
  if(NOT ${package}_INCLUDE_DIRS OR (NOT broken AND NOT ${package}_LIBRARIES))
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
  if(broken)
    # Everything but the include directories, as the target states it.
    foreach(property IN ITEMS INTERFACE_LINK_LIBRARIES INTERFACE_COMPILE_OPTIONS
                              INTERFACE_COMPILE_DEFINITIONS INTERFACE_COMPILE_FEATURES
                              INTERFACE_LINK_OPTIONS INTERFACE_LINK_DIRECTORIES)
      get_target_property(value ${broken} ${property})
      if(value)
        set_property(TARGET ${name} APPEND PROPERTY ${property} "${value}")
      endif()
    endforeach()
    set(_hst_${package}_source
        "target ${broken} with include ${include_dirs} (its own include directories do not exist)"
        PARENT_SCOPE)
  else()
    target_link_libraries(${name} INTERFACE ${${package}_LIBRARIES})
    set(_hst_${package}_source "${package}_LIBRARIES (${${package}_LIBRARIES}), include ${include_dirs}"
        PARENT_SCOPE)
  endif()
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
