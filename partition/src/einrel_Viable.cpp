#include <einrel_Error.hpp>
#include <einrel_Viable.hpp>

#include <algorithm>

namespace einrel::partition {
namespace {

// Appends every vector with exponents[k] <= caps[k] for k >= pos summing to `left` over k >= pos; `room` is
// the sum of caps[k] for k >= pos.
void enumerate(const std::string& labels, const std::vector<int>& caps, std::vector<int>& exponents, std::size_t pos,
               int left, int room, std::vector<PartitionVector>& out) {
  if (pos == labels.size()) {
    std::vector<Extent> parts;
    for (int e : exponents) parts.push_back(Extent{1} << e);
    out.emplace_back(labels, std::move(parts));
    return;
  }
  const int room_after = room - caps[pos];
  for (int e = std::min(caps[pos], left); e >= 0 && e + room_after >= left; --e) {
    exponents[pos] = e;
    enumerate(labels, caps, exponents, pos + 1, left - e, room_after, out);
  }
}

}  // namespace

void check_procs(Extent p) {
  if (!is_power_of_two(p))
    throw Error("the number of processors p must be a power of two (1, 2, 4, ...), got " + std::to_string(p));
}

int floor_log2(Extent n) {
  int k = 0;
  while ((Extent{2} << k) <= n) ++k;
  return k;
}

std::vector<PartitionVector> viable(const ResolvedEinSum& e, Extent p) {
  check_procs(p);
  const std::string& labels = e.unique_labels();
  std::vector<int> caps;
  int room = 0;
  for (Extent extent : e.extents(labels)) {
    caps.push_back(floor_log2(extent));
    room += caps.back();
  }
  std::vector<int> exponents(labels.size(), 0);
  std::vector<PartitionVector> out;
  enumerate(labels, caps, exponents, 0, std::min(floor_log2(p), room), room, out);
  return out;
}

}  // namespace einrel::partition
