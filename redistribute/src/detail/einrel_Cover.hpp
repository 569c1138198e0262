#ifndef EINREL_COVER_HPP
#define EINREL_COVER_HPP

#include <einrel_BlockLayout.hpp>
#include <einrel_Communicator.hpp>

#include <climits>
#include <vector>

namespace einrel::redistribute {

// A host code's own decomposition of a tensor: on every rank, the boxes of the pieces it holds. The boxes
// of all ranks must not overlap and must cover the bound; they need not form a grid (slabs, pencils,
// bricks of any sizes). einrel refines such a cover to the rectilinear grid cut at every box boundary,
// each cell owned by the rank whose box holds it (BlockGrid::from_cuts, Placement::owners), and moves data
// between it and its own layouts with the ordinary redistribution plans. Empty boxes are ignored.

// The refined layout of `boxes_by_rank` (one list per rank). Throws Error when a box has another rank than
// the bound or leaves it, when two boxes overlap (naming both ranks and boxes), or when part of the bound
// is in no box (naming a missing point) — unless `holes` (the pieces of a block-sparse tensor,
// docs/sparse.md): then a cell no box holds is an absent block (no site).
BlockLayout cover_layout(const Bound& bound, const std::vector<std::vector<Box>>& boxes_by_rank, bool holes = false);

// Collective over comm: every rank's `my_boxes`, gathered (comm::allgather_varying: 64-bit counts, in MPI
// calls of at most `max_message_elements` coordinates a rank), in one list per rank.
std::vector<std::vector<Box>> gather_boxes(const comm::Communicator& comm, const std::vector<Box>& my_boxes,
                                           Extent max_message_elements = INT_MAX);

// The cell blocks of `layout` (a cover_layout) inside `box`, by grid id: what one piece is cut into.
std::vector<Extent> cells_in(const BlockLayout& layout, const Box& box);

}  // namespace einrel::redistribute

#endif
