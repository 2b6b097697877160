#pragma once
// HST: y += A[:, cols] * dx for a fixed sparse A and a small, drifting set of
// changed columns. See README.md.

#include <hst/Config.hpp>

#include <hst/AdaptiveSession.hpp>
#include <hst/ExactSetArm.hpp>
#include <hst/Operator.hpp>
#include <hst/Options.hpp>
#include <hst/Resync.hpp>
#include <hst/ScatterArm.hpp>
#include <hst/ScheduledArm.hpp>
#include <hst/io/MatrixMarket.hpp>

#ifdef HST_ENABLE_MPI
#include <hst/distributed/BlockPartition.hpp>
#include <hst/distributed/DistributedOperator.hpp>
#endif
