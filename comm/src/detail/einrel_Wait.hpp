#ifndef EINREL_WAIT_HPP
#define EINREL_WAIT_HPP

#include <mpi.h>

#include <string>
#include <vector>

namespace einrel::comm {

// Completing MPI requests without holding a core while the peer needs it. MPICH's blocking calls poll
// without ever giving the processor up, so with more ranks than cores (a laptop, a CI runner, `-n 4`
// on two cores) every collective costs a scheduler time slice (docs/architecture.md has the figures); these
// waits poll MPI_Test* and yield the processor between polls once a short spin has not completed the request.
// On a core of its own, yielding returns at once.
// Every einrel wait goes through these; `call` names the MPI call for the error message.

// Waits for `request` (a request of a nonblocking collective, send or receive).
void wait(MPI_Request& request, const std::string& call);

// Waits for every request; completed ones become MPI_REQUEST_NULL.
void wait_all(std::vector<MPI_Request>& requests, const std::string& call);

// Waits for any active request; returns its index (MPI_UNDEFINED when none is active).
int wait_any(std::vector<MPI_Request>& requests, const std::string& call);

// Waits for the next message from `peer` with `tag` on comm (MPI_Improbe) and returns its handle, with its
// status: for a receiver that sizes its buffer by the message (MPI_Get_count, then MPI_Imrecv).
MPI_Message probe(MPI_Comm comm, int peer, int tag, MPI_Status& status, const std::string& call);

// `start` is the return code of a call that started `request` (MPI_Iallreduce(..., &request)): checks
// it, then waits. The nonblocking form of a collective, with this wait, stands for the blocking one.
void complete(int start, MPI_Request& request, const std::string& call);

}  // namespace einrel::comm

#endif
