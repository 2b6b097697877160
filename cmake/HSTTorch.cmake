# Finds what the PyTorch extension (python/, HST_ENABLE_TORCH) builds against:
# libtorch's CMake package (Debian: libtorch-dev) and a Python interpreter
# that imports the matching torch (Debian: python3-torch, seen only by
# /usr/bin/python3, not by a pyenv or venv python3 earlier on PATH: pass
# -DPython3_EXECUTABLE=/usr/bin/python3). Defines HST::Torch.
#
# Torch's headers are included as SYSTEM headers (-isystem; on Debian they
# live in /usr/include, a system directory anyway): they warn a lot under
# -Wall -Wextra, and HST builds with -Werror.

find_package(Torch REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

execute_process(
  COMMAND ${Python3_EXECUTABLE} -c "import torch; print(torch.__version__)"
  OUTPUT_VARIABLE _hst_python_torch OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_VARIABLE _hst_python_error RESULT_VARIABLE _hst_python_rc)
if(NOT _hst_python_rc EQUAL 0)
  message(FATAL_ERROR
    "HST_ENABLE_TORCH: ${Python3_EXECUTABLE} cannot import torch (${_hst_python_error}). "
    "Point -DPython3_EXECUTABLE at the interpreter that has it "
    "(Debian's python3-torch: /usr/bin/python3).")
endif()
string(REGEX MATCH "^[0-9]+\\.[0-9]+" _hst_python_torch_mm "${_hst_python_torch}")
string(REGEX MATCH "^[0-9]+\\.[0-9]+" _hst_libtorch_mm "${Torch_VERSION}")
if(NOT _hst_python_torch_mm STREQUAL _hst_libtorch_mm)
  message(FATAL_ERROR
    "HST_ENABLE_TORCH: libtorch ${Torch_VERSION} (${Torch_DIR}) but ${Python3_EXECUTABLE} "
    "imports torch ${_hst_python_torch}: the extension must be built against the torch "
    "that loads it.")
endif()
message(STATUS "HST: libtorch ${Torch_VERSION} (${Torch_DIR}); Python ${Python3_VERSION} "
               "(${Python3_EXECUTABLE}) with torch ${_hst_python_torch}")

if(NOT TARGET HST::Torch)
  add_library(HST::Torch INTERFACE IMPORTED GLOBAL)
  target_include_directories(HST::Torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
  target_link_libraries(HST::Torch INTERFACE ${TORCH_LIBRARIES})
endif()
unset(_hst_python_torch)
unset(_hst_python_torch_mm)
unset(_hst_libtorch_mm)
unset(_hst_python_error)
unset(_hst_python_rc)
