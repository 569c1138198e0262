#include <einrel_Error.hpp>
#include <einrel_Viable.hpp>

#include <algorithm>

namespace einrel::partition {
namespace {

// Appends every vector whose parts from `pos` on multiply to `left`, each one of `ds` (the divisors of the
// product sought, increasing) and within its extent, the part at `pos` largest first; `room[pos]` is the
// product of the extents from pos on, so a branch that cannot reach `left` is cut.
void enumerate(const std::string& labels, const std::vector<Extent>& extents, const std::vector<double>& room,
               const std::vector<Extent>& ds, std::vector<Extent>& parts, std::size_t pos, Extent left,
               std::vector<PartitionVector>& out) {
  if (pos == labels.size()) {
    if (left == 1) out.emplace_back(labels, parts);
    return;
  }
  for (std::size_t i = ds.size(); i-- > 0;) {
    const Extent part = ds[i];
    if (part > left || left % part || part > extents[pos] || room[pos + 1] < static_cast<double>(left / part)) continue;
    parts[pos] = part;
    enumerate(labels, extents, room, ds, parts, pos + 1, left / part, out);
  }
}

}  // namespace

void check_procs(Extent p) {
  if (p < 1 || p > (Extent{1} << 40))
    throw Error("the number of processors p must be a whole number from 1 to 2^40, got " + std::to_string(p));
}

Extent reachable_procs(const std::vector<Extent>& extents, Extent p) {
  const std::vector<Extent> ds = divisors(p);
  std::vector<char> reachable(ds.size(), 0), next(ds.size());  // reachable[i]: the labels so far can reach ds[i]
  reachable[0] = 1;
  for (Extent extent : extents) {
    std::fill(next.begin(), next.end(), 0);
    for (std::size_t i = 0; i < ds.size(); ++i) {
      if (!reachable[i]) continue;
      for (std::size_t j = i; j < ds.size(); ++j)
        if (ds[j] % ds[i] == 0 && ds[j] / ds[i] <= extent) next[j] = 1;
    }
    reachable.swap(next);
  }
  std::size_t best = ds.size() - 1;
  while (!reachable[best]) --best;  // ds[0] = 1 is always reachable
  return ds[best];
}

std::vector<Extent> divisors(Extent n) {
  std::vector<Extent> out{1};
  const std::vector<Extent> primes = prime_factors(n);
  for (std::size_t k = 0; k < primes.size();) {  // each distinct prime f with multiplicity m
    const Extent f = primes[k];
    std::size_t m = 0;
    for (; k < primes.size() && primes[k] == f; ++k) ++m;
    const std::size_t before = out.size();
    for (std::size_t i = 0; i < before; ++i)
      for (Extent power = f, e = 0; e < static_cast<Extent>(m); power *= f, ++e) out.push_back(out[i] * power);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<PartitionVector> viable(const ResolvedEinSum& e, Extent p) {
  check_procs(p);
  const std::string& labels = e.unique_labels();
  const std::vector<Extent> extents = e.extents(labels);
  std::vector<double> room(labels.size() + 1, 1.0);
  for (std::size_t k = labels.size(); k-- > 0;) room[k] = room[k + 1] * static_cast<double>(extents[k]);
  std::vector<Extent> parts(labels.size(), 1);
  std::vector<PartitionVector> out;
  const Extent product = reachable_procs(extents, p);
  enumerate(labels, extents, room, divisors(product), parts, 0, product, out);
  return out;
}

}  // namespace einrel::partition
