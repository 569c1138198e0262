#ifndef EINREL_BLOCKCYCLIC_HPP
#define EINREL_BLOCKCYCLIC_HPP

// ScaLAPACK's block-cyclic matrices as einrel sees them: a descriptor, and the blocks of a submatrix one
// process of the grid holds, each a box of the matrix and a place in the process's column-major local array.

#include <cstdint>
#include <string>
#include <vector>

namespace einrel::scalapack {

// A ScaLAPACK array descriptor of a dense matrix (DTYPE_ = 1, DLEN_ = 9): the BLACS context, the global
// size, the block size, the process row and column of the first block, and the local leading dimension.
struct Descriptor {
  int ctxt = 0;
  std::int64_t m = 0, n = 0, mb = 1, nb = 1;
  int rsrc = 0, csrc = 0;
  std::int64_t lld = 1;
};

// The descriptor `desc` (9 integers), or nothing for another DTYPE_ or entries that no grid makes sense of
// (negative sizes or sources, blocks below 1). The leading dimension, a process's own, is checked apart
// (illegal_on).
bool read_descriptor(const int* desc, Descriptor& out);

// The rows (or columns) of n, in blocks of b dealt from process `source` on, that process p of `procs` holds
// (ScaLAPACK's NUMROC).
std::int64_t local_extent(std::int64_t n, std::int64_t b, int p, int source, int procs);

// Why `d` is illegal on process row `myrow` of an nprow x npcol grid, as ScaLAPACK's argument checks see it
// (a source process outside the grid, a local leading dimension below max(1, local rows)), or an empty string.
// The leading dimension is the process's own, so processes may disagree: callers agree before acting.
std::string illegal_on(const Descriptor& d, int nprow, int npcol, int myrow);

// One block of a submatrix held by a process: global rows [row, row + rows) and columns [col, col + cols) of
// the matrix, starting at (local_row, local_col) of the process's local array.
struct LocalBlock {
  std::int64_t row = 0, col = 0, rows = 0, cols = 0, local_row = 0, local_col = 0;
};

// The blocks of the submatrix with rows [i0, i0 + m) and columns [j0, j0 + n) (0-based) that process
// (prow, pcol) of an nprow x npcol grid holds, clipped to the submatrix, in column-block then row-block order;
// neighbouring blocks a process holds next to each other in its local array too (all of them along a
// dimension the grid does not split) are one block.
std::vector<LocalBlock> local_blocks(const Descriptor& d, std::int64_t i0, std::int64_t j0, std::int64_t m,
                                     std::int64_t n, int prow, int pcol, int nprow, int npcol);

// How many blocks local_blocks gives for that submatrix on all processes of the grid together (the same on
// every process).
std::int64_t blocks_on_grid(const Descriptor& d, std::int64_t i0, std::int64_t j0, std::int64_t m, std::int64_t n,
                            int nprow, int npcol);

}  // namespace einrel::scalapack

#endif
