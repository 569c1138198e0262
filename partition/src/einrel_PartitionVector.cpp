#include <einrel_Error.hpp>
#include <einrel_PartitionVector.hpp>

namespace einrel::partition {

bool is_power_of_two(Extent n) { return n >= 1 && (n & (n - 1)) == 0; }

PartitionVector::PartitionVector(std::string labels, std::vector<Extent> parts)
    : labels_(std::move(labels)), parts_(std::move(parts)) {
  if (labels_.size() != parts_.size())
    throw Error("partition vector has " + std::to_string(labels_.size()) + " labels but " +
                std::to_string(parts_.size()) + " part counts");
  for (std::size_t k = 0; k < labels_.size(); ++k) {
    if (labels_.find(labels_[k]) != k)
      throw Error(std::string("label '") + labels_[k] + "' repeats in partition vector");
    if (!is_power_of_two(parts_[k]))
      throw Error(std::string("label '") + labels_[k] + "' has " + std::to_string(parts_[k]) +
                  " parts; parts must be a power of two");
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

void PartitionVector::check_fits(const EinSum& e, const std::vector<Bound>& input_bounds) const {
  const std::string u = e.unique_labels();
  if (u.size() != labels_.size() || u.find_first_not_of(labels_) != std::string::npos)
    throw Error("partition vector " + str() + " does not cover exactly the labels '" + u + "' of " + e.equation());
  for (std::size_t k = 0; k < e.inputs.size(); ++k)
    for (std::size_t dim = 0; dim < e.inputs[k].size(); ++dim) {
      const char c = e.inputs[k][dim];
      if (parts_of(c) > input_bounds.at(k)[dim])
        throw Error(std::string("label '") + c + "' of extent " + std::to_string(input_bounds[k][dim]) +
                    " cannot be cut into " + std::to_string(parts_of(c)) + " parts");
    }
}

std::string PartitionVector::str() const {
  std::string s = "{";
  for (std::size_t k = 0; k < labels_.size(); ++k)
    s += (k ? "," : "") + std::string(1, labels_[k]) + ":" + std::to_string(parts_[k]);
  return s + "}";
}

}  // namespace einrel::partition
