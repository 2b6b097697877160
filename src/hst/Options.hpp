#pragma once

namespace hst
{

/// How `Operator` cuts A into tiles. Fixed for the operator's lifetime.
struct OperatorOptions
{
  /// Columns per column tile (a tile holds `tile` consecutive columns of the
  /// locality order). Must be positive.
  int tile = 8;
  /// Rows per row block (consecutive rows of the locality order). A tile is one
  /// column tile crossed with one row block; the scheduled arm runs one row
  /// block per work item, so no two work items write the same row of y. Tall
  /// blocks cost the fewest tile visits on one thread; shorter blocks expose
  /// more parallelism. Must be positive.
  int row_block = 1024;
  /// Order rows and columns by graph locality (a breadth-first sweep of the
  /// bipartite row/column graph from a pseudo-peripheral column) before
  /// cutting tiles, so that the caller's numbering does not matter. With
  /// `false`, tiles follow the caller's numbering.
  bool locality = true;
};

/// How a scheduled arm (`Operator::session`) grows and shrinks its schedule.
struct SessionOptions
{
  /// A scheduled column tile that no step has used for more than
  /// `retire_after` steps is retired when the schedule is next re-planned
  /// (any step whose column set differs from the previous step's). Must be
  /// positive.
  int retire_after = 64;
  /// With `strict`, the schedule is fixed: a step whose columns fall in a
  /// column tile the schedule does not hold throws `std::invalid_argument`
  /// instead of compiling it in, and no tile is ever retired.
  bool strict = false;
};

} // namespace hst
