#ifndef EINREL_COMMUNICATOR_HPP
#define EINREL_COMMUNICATOR_HPP

#include <mpi.h>

#include <memory>
#include <string>

namespace einrel::redistribute {

// einrel's own duplicate of a user's communicator (ArborX/Cabana pattern): one MPI_Comm_dup per
// engine or context, shared by every relation and exchange made from it through a shared_ptr whose
// deleter frees it. MPI errors on it are returned, not fatal, so that check_mpi can turn them into
// einrel::Error. Copies share the duplicate.
class Communicator {
 public:
  // Collective over `comm`: duplicates it. Throws Error when MPI is not initialized or the dup fails.
  explicit Communicator(MPI_Comm comm);

  MPI_Comm get() const { return *comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  std::shared_ptr<MPI_Comm> comm_;
  int rank_ = 0;
  int size_ = 1;
};

// Throws Error naming the call and MPI's own message unless rc is MPI_SUCCESS.
void check_mpi(int rc, const std::string& call);

// The MPI datatype of float and double.
template <class Scalar>
MPI_Datatype mpi_datatype();

}  // namespace einrel::redistribute

#endif
