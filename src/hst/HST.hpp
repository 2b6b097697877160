// placeholder: real umbrella header is being written
#pragma once
#include <hst/Config.hpp>
#include <Kokkos_Core.hpp>
