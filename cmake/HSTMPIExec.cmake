# Adds the flags Open MPI needs to run tests on a small machine as any user:
# --oversubscribe (more ranks than cores) and, for root, --allow-run-as-root.
# Used by the unit tests and the examples; expects find_package(MPI) done.
if(MPIEXEC_EXECUTABLE)
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version
                  OUTPUT_VARIABLE _hst_mpiexec_version ERROR_QUIET)
  execute_process(COMMAND id -u OUTPUT_VARIABLE _hst_uid
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_hst_mpiexec_version MATCHES "Open MPI|OpenRTE")
    set(_hst_openmpi_flags --oversubscribe)
    if(_hst_uid STREQUAL "0")
      list(APPEND _hst_openmpi_flags --allow-run-as-root)
    endif()
    foreach(flag IN LISTS _hst_openmpi_flags)
      if(NOT flag IN_LIST MPIEXEC_PREFLAGS)
        list(APPEND MPIEXEC_PREFLAGS ${flag})
      endif()
    endforeach()
  endif()
endif()
