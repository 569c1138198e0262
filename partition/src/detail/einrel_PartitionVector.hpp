#ifndef EINREL_PARTITIONVECTOR_HPP
#define EINREL_PARTITIONVECTOR_HPP

#include <einrel_Bound.hpp>
#include <einrel_EinSum.hpp>
#include <einrel_ResolvedEinSum.hpp>

#include <string>
#include <vector>

namespace einrel::partition {

// The partition vector d of one EinSum (eindecomp.txt §5, docs/architecture.md): a number of parts (any whole
// number >= 1) for each unique label. Labels shared by X and Y are co-partitioned because d has one entry per label.
class PartitionVector {
 public:
  PartitionVector() = default;
  // `labels` are distinct letters, `parts[k]` the parts of labels[k]; throws Error unless every entry
  // is at least 1.
  PartitionVector(std::string labels, std::vector<Extent> parts);

  // Every label of `e` in one part.
  static PartitionVector unpartitioned(const EinSum& e);

  const std::string& labels() const { return labels_; }
  const std::vector<Extent>& parts() const { return parts_; }
  // Parts of one label; throws Error when the label is not in the vector.
  Extent parts_of(char label) const;
  // d[l] for a tensor indexed by `tensor_labels`: its per-dimension parts.
  std::vector<Extent> project(const std::string& tensor_labels) const;
  // Number of join results (kernel calls): the product over all unique labels.
  Extent num_join_results() const;

  // Throws Error unless the vector covers exactly the unique labels of the EinSum and no label is cut
  // into more parts than its extent.
  void check_fits(const ResolvedEinSum& resolved) const;

  std::string str() const;  // "{i:2,j:1,k:4}"
  friend bool operator==(const PartitionVector& a, const PartitionVector& b) {
    return a.labels_ == b.labels_ && a.parts_ == b.parts_;
  }

 private:
  std::string labels_;
  std::vector<Extent> parts_;
};

}  // namespace einrel::partition

#endif
