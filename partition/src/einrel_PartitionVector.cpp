#include <einrel_Error.hpp>
#include <einrel_PartitionVector.hpp>

namespace einrel::partition {

PartitionVector::PartitionVector(std::string labels, std::vector<Extent> parts)
    : labels_(std::move(labels)), parts_(std::move(parts)) {
  if (labels_.size() != parts_.size())
    throw Error("partition vector has " + std::to_string(labels_.size()) + " labels but " +
                std::to_string(parts_.size()) + " part counts");
  for (std::size_t k = 0; k < labels_.size(); ++k) {
    if (labels_.find(labels_[k]) != k)
      throw Error(std::string("label '") + labels_[k] + "' repeats in partition vector");
    if (parts_[k] < 1)
      throw Error(std::string("label '") + labels_[k] + "' has " + std::to_string(parts_[k]) +
                  " parts; parts must be at least 1");
  }
}

PartitionVector PartitionVector::unpartitioned(const EinSum& e) {
  const std::string u = e.unique_labels();
  return PartitionVector(u, std::vector<Extent>(u.size(), 1));
}

Extent PartitionVector::parts_of(char label) const {
  const auto pos = labels_.find(label);
  if (pos == std::string::npos) throw Error(std::string("label '") + label + "' is not in partition vector " + str());
  return parts_[pos];
}

std::vector<Extent> PartitionVector::project(const std::string& tensor_labels) const {
  std::vector<Extent> d;
  for (char c : tensor_labels) d.push_back(parts_of(c));
  return d;
}

Extent PartitionVector::num_join_results() const {
  Extent n = 1;
  for (Extent p : parts_) n *= p;
  return n;
}

void PartitionVector::check_fits(const ResolvedEinSum& resolved) const {
  const std::string& u = resolved.unique_labels();
  if (u.size() != labels_.size() || u.find_first_not_of(labels_) != std::string::npos)
    throw Error("partition vector " + str() + " does not cover exactly the labels '" + u + "' of " +
                resolved.einsum().equation());
  for (char c : u)
    if (parts_of(c) > resolved.extent(c))
      throw Error(std::string("label '") + c + "' of extent " + std::to_string(resolved.extent(c)) +
                  " cannot be cut into " + std::to_string(parts_of(c)) + " parts");
}

std::string PartitionVector::str() const {
  std::string s = "{";
  for (std::size_t k = 0; k < labels_.size(); ++k)
    s += (k ? "," : "") + std::string(1, labels_[k]) + ":" + std::to_string(parts_[k]);
  return s + "}";
}

}  // namespace einrel::partition
