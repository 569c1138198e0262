#ifndef EINREL_SPLITCOLLECTIVES_HPP
#define EINREL_SPLITCOLLECTIVES_HPP

// The MPI calls of a synthesized collective step whose counts may pass what one MPI call takes (int counts):
// each is split into calls of at most `chunk` elements per member, in order, so that a step of any size runs on
// any MPI 3 library. Every member of a group has the same counts (a distributed type's tiles are alike), so
// every member makes the same calls. `chunk` is Options::max_message_elements (INT_MAX unless a test lowers it).

#include <einrel_Error.hpp>
#include <einrel_Tensor.hpp>
#include <einrel_Wait.hpp>

#include <mpi.h>

#include <climits>
#include <string>
#include <utility>
#include <vector>

namespace einrel::redistribute::mesh::detail {

// Throws Error unless 1 <= chunk <= INT_MAX.
inline void check_chunk(Extent chunk) {
  if (chunk < 1 || chunk > INT_MAX)
    throw Error("the largest MPI message must be 1 to " + std::to_string(INT_MAX) + " elements, not " +
                std::to_string(chunk));
}

// Calls f(offset, length) for the pieces of n elements of at most `chunk` each, in order; once with (0, 0) for
// n = 0, as a collective call is made also when it moves nothing.
template <class F>
void for_each_chunk(Extent n, Extent chunk, F&& f) {
  if (n == 0) f(Extent{0}, 0);
  for (Extent offset = 0; offset < n; offset += chunk) f(offset, static_cast<int>(std::min(chunk, n - offset)));
}

// An MPI datatype of `length` consecutive elements of `type` whose extent is `stride` elements: in a buffer of
// one slot of `stride` elements per member, the part at one offset of every slot.
class StridedPart {
 public:
  StridedPart(MPI_Datatype type, int length, Extent stride) {
    MPI_Datatype run;
    MPI_Aint lower = 0, extent = 0;
    comm::check_mpi(MPI_Type_get_extent(type, &lower, &extent), "MPI_Type_get_extent");
    comm::check_mpi(MPI_Type_contiguous(length, type, &run), "MPI_Type_contiguous");
    const int made = MPI_Type_create_resized(run, 0, static_cast<MPI_Aint>(stride) * extent, &type_);
    MPI_Type_free(&run);
    comm::check_mpi(made, "MPI_Type_create_resized");
    comm::check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
  }
  ~StridedPart() { MPI_Type_free(&type_); }
  StridedPart(const StridedPart&) = delete;
  StridedPart& operator=(const StridedPart&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// MPI_Iallgather or MPI_Ialltoall (`call`, named `name`; the two take the same arguments) of n elements per member
// into `receive`, one slot of n elements per member: from this rank's n elements at `send` (allgather) or from
// `send` with a slot per member too (alltoall, `send_slots`).
template <class Scalar, class Call>
void split_slotted(Call call, const char* name, const Scalar* send, bool send_slots, Extent n, Scalar* receive,
                   MPI_Datatype type, MPI_Comm comm, Extent chunk) {
  MPI_Request request;
  if (n <= chunk) {
    const int count = static_cast<int>(n);
    comm::complete(call(send, count, type, receive, count, type, comm, &request), request, name);
    return;
  }
  for_each_chunk(n, chunk, [&](Extent offset, int length) {
    const StridedPart part(type, length, n);
    comm::complete(call(send + offset, send_slots ? 1 : length, send_slots ? part.get() : type, receive + offset, 1,
                        part.get(), comm, &request),
                   request, name);
  });
}

template <class Scalar>
void split_allgather(const Scalar* send, Extent n, Scalar* receive, MPI_Datatype type, MPI_Comm comm, Extent chunk) {
  split_slotted(MPI_Iallgather, "MPI_Iallgather", send, false, n, receive, type, comm, chunk);
}

template <class Scalar>
void split_alltoall(const Scalar* send, Extent n, Scalar* receive, MPI_Datatype type, MPI_Comm comm, Extent chunk) {
  split_slotted(MPI_Ialltoall, "MPI_Ialltoall", send, true, n, receive, type, comm, chunk);
}

// Point to point within the mesh's communicator: this rank's n elements to `dest` and n from `source` (either
// may be none: MPI_PROC_NULL), as messages of at most `chunk` elements with one tag, which MPI delivers in order.
template <class Scalar>
void split_exchange(const Scalar* send, Scalar* receive, Extent n, int dest, int source, MPI_Datatype type,
                    MPI_Comm comm, Extent chunk) {
  std::vector<MPI_Request> requests;
  for_each_chunk(n, chunk, [&](Extent offset, int length) {
    MPI_Request r;
    if (source != MPI_PROC_NULL) {
      comm::check_mpi(MPI_Irecv(receive + offset, length, type, source, 0, comm, &r), "MPI_Irecv");
      requests.push_back(r);
    }
    if (dest != MPI_PROC_NULL) {
      comm::check_mpi(MPI_Isend(send + offset, length, type, dest, 0, comm, &r), "MPI_Isend");
      requests.push_back(r);
    }
  });
  comm::wait_all(requests, "MPI_Irecv/MPI_Isend");
}

}  // namespace einrel::redistribute::mesh::detail

#endif
