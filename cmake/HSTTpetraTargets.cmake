# Normalises the Tpetra import into HST::Tpetra. Expects find_package(Tpetra)
# to have run. Used by the build tree and by the installed HSTConfig.cmake
# when HST was built with HST_ENABLE_TPETRA.
#
# Debian's Trilinos 13.2 (libtrilinos-tpetra-dev) quirks:
# - TpetraConfig.cmake is a TriBITS package config: no version file (its
#   version is Trilinos_VERSION, found next to it as TrilinosConfig.cmake) and
#   no Tpetra:: namespace. Its targets (trilinos_tpetra, trilinos_tpetrainout,
#   ...) carry the libraries but no include directory; the headers are in
#   Tpetra_INCLUDE_DIRS (/usr/include/trilinos), given here as SYSTEM
#   includes: Tpetra's and Teuchos' headers warn under -Wall -Wextra
#   (unused parameters, deprecated declarations), which must not fail our
#   -Werror builds.
# - libtrilinos-tpetra-dev depends on neither libtrilinos-teuchos-dev, whose
#   headers Tpetra's include (Teuchos_ConfigDefs.hpp), nor
#   libtrilinos-epetra-dev, whose EpetraConfig.cmake TpetraConfig.cmake
#   includes (without it find_package(Tpetra) fails: "imported targets are
#   referenced, but are missing: trilinos_epetra"): install all three
#   (scripts/install_deps.sh does).
# - The package is built with MPI (Tpetra_TPL_LIST holds MPI): HST_ENABLE_TPETRA
#   therefore requires HST_ENABLE_MPI.
# - Its Kokkos is Debian's libtrilinos-kokkos (the same Trilinos release), so
#   Tpetra's Node is Kokkos::Serial there, as HST's default device is.

if(TARGET HST::Tpetra)
  return()
endif()

if(NOT Tpetra_FOUND AND NOT Tpetra_CONFIG_INCLUDED)
  message(FATAL_ERROR "HST: find_package(Tpetra) must run before including ${CMAKE_CURRENT_LIST_FILE}")
endif()
if(NOT Tpetra_INCLUDE_DIRS OR NOT Tpetra_LIBRARIES)
  message(FATAL_ERROR "HST: Tpetra's config (${Tpetra_DIR}) gives no Tpetra_INCLUDE_DIRS or "
                      "Tpetra_LIBRARIES")
endif()

add_library(HST::Tpetra INTERFACE IMPORTED GLOBAL)
set(_hst_tpetra_include_dirs)
# Not Tpetra_TPL_INCLUDE_DIRS: it is /usr/include, which as -isystem breaks
# libstdc++'s #include_next.
foreach(dir IN LISTS Tpetra_INCLUDE_DIRS)
  get_filename_component(dir "${dir}" ABSOLUTE)
  if(EXISTS "${dir}")
    list(APPEND _hst_tpetra_include_dirs "${dir}")
  endif()
endforeach()
list(REMOVE_DUPLICATES _hst_tpetra_include_dirs)
target_include_directories(HST::Tpetra SYSTEM INTERFACE ${_hst_tpetra_include_dirs})
# The TriBITS library names are imported targets where the config defined them
# (Debian), else plain library names found in Tpetra_LIBRARY_DIRS.
target_link_libraries(HST::Tpetra INTERFACE ${Tpetra_LIBRARIES})
if(Tpetra_LIBRARY_DIRS)
  target_link_directories(HST::Tpetra INTERFACE ${Tpetra_LIBRARY_DIRS})
endif()

if(Tpetra_VERSION)
  set(_hst_tpetra_version "${Tpetra_VERSION}")
elseif(Trilinos_VERSION)
  set(_hst_tpetra_version "${Trilinos_VERSION} (Trilinos)")
else()
  set(_hst_tpetra_version "unknown")
  if(EXISTS "${Tpetra_DIR}/../Trilinos/TrilinosConfigVersion.cmake")
    file(STRINGS "${Tpetra_DIR}/../Trilinos/TrilinosConfigVersion.cmake" _hst_line
         REGEX "PACKAGE_VERSION \"[0-9.]+\"" LIMIT_COUNT 1)
    if(_hst_line MATCHES "\"([0-9.]+)\"")
      set(_hst_tpetra_version "${CMAKE_MATCH_1} (Trilinos)")
    endif()
  endif()
endif()
if(NOT HST_FIND_QUIETLY)
  message(STATUS "HST: Tpetra ${_hst_tpetra_version} (${Tpetra_DIR}), include ${_hst_tpetra_include_dirs}")
endif()
unset(_hst_tpetra_version)
unset(_hst_tpetra_include_dirs)
unset(_hst_line)
