#include <einrel_BlockCyclic.hpp>

#include <algorithm>

namespace einrel::scalapack {
namespace {

// The pieces of [start, start + count) of one dimension held by process `p` of `procs`, block size `b`, first
// block on process `source`: (global start, length, local start) each. Blocks that follow each other both
// globally and locally (every block, on one process) are one run.
struct Run {
  std::int64_t global, length, local;
};
std::vector<Run> runs(std::int64_t start, std::int64_t count, std::int64_t b, int p, int source, int procs) {
  std::vector<Run> out;
  for (std::int64_t block = start / b; block * b < start + count; ++block) {
    if ((block + source) % procs != p) continue;
    const std::int64_t lo = std::max(block * b, start), hi = std::min((block + 1) * b, start + count);
    const std::int64_t local = (block / procs) * b + (lo - block * b);  // ScaLAPACK's INDXG2L
    if (!out.empty() && out.back().global + out.back().length == lo && out.back().local + out.back().length == local)
      out.back().length += hi - lo;
    else
      out.push_back({lo, hi - lo, local});
  }
  return out;
}

}  // namespace

bool read_descriptor(const int* desc, Descriptor& out) {
  if (desc[0] != 1) return false;
  out = {desc[1], desc[2], desc[3], desc[4], desc[5], desc[6], desc[7], desc[8]};
  return out.m >= 0 && out.n >= 0 && out.mb > 0 && out.nb > 0 && out.rsrc >= 0 && out.csrc >= 0;
}

std::int64_t local_extent(std::int64_t n, std::int64_t b, int p, int source, int procs) {
  const std::int64_t distance = (procs + p - source) % procs, blocks = n / b, extra = blocks % procs;
  std::int64_t held = (blocks / procs) * b;
  if (distance < extra) held += b;
  if (distance == extra) held += n % b;
  return held;
}

std::string illegal_on(const Descriptor& d, int nprow, int npcol, int myrow) {
  if (d.rsrc >= nprow)
    return "RSRC_ " + std::to_string(d.rsrc) + " outside a grid of " + std::to_string(nprow) + " rows";
  if (d.csrc >= npcol)
    return "CSRC_ " + std::to_string(d.csrc) + " outside a grid of " + std::to_string(npcol) + " columns";
  const std::int64_t rows = std::max<std::int64_t>(1, local_extent(d.m, d.mb, myrow, d.rsrc, nprow));
  if (d.lld < rows) return "LLD_ " + std::to_string(d.lld) + " below the " + std::to_string(rows) + " local rows";
  return {};
}

std::int64_t blocks_on_grid(const Descriptor& d, std::int64_t i0, std::int64_t j0, std::int64_t m, std::int64_t n,
                            int nprow, int npcol) {
  // Along a dimension the grid splits, every block touched is one; along one it does not, one run in all.
  auto along = [](std::int64_t start, std::int64_t count, std::int64_t b, int procs) -> std::int64_t {
    if (count <= 0) return 0;
    return procs == 1 ? 1 : (start + count - 1) / b - start / b + 1;
  };
  return along(i0, m, d.mb, nprow) * along(j0, n, d.nb, npcol);
}

std::vector<LocalBlock> local_blocks(const Descriptor& d, std::int64_t i0, std::int64_t j0, std::int64_t m,
                                     std::int64_t n, int prow, int pcol, int nprow, int npcol) {
  std::vector<LocalBlock> blocks;
  const std::vector<Run> rows = runs(i0, m, d.mb, prow, d.rsrc, nprow);
  for (const Run& c : runs(j0, n, d.nb, pcol, d.csrc, npcol))
    for (const Run& r : rows) blocks.push_back({r.global, c.global, r.length, c.length, r.local, c.local});
  return blocks;
}

}  // namespace einrel::scalapack
