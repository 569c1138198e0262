#include <einrel_Communicator.hpp>
#include <einrel_Wait.hpp>

#include <thread>

namespace einrel::comm {
namespace {

// Polls `done` (which returns true once complete), yielding the processor after the first polls.
template <class Done>
void poll(Done&& done) {
  constexpr int spins_before_yield = 100;
  for (int spins = 0; !done(); ++spins)
    if (spins >= spins_before_yield) std::this_thread::yield();
}

}  // namespace

void wait(MPI_Request& request, const std::string& call) {
  poll([&] {
    int flag = 0;
    check_mpi(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), call);
    return flag != 0;
  });
}

void wait_all(std::vector<MPI_Request>& requests, const std::string& call) {
  poll([&] {
    int flag = 0;
    check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag, MPI_STATUSES_IGNORE), call);
    return flag != 0;
  });
}

MPI_Message probe(MPI_Comm comm, int peer, int tag, MPI_Status& status, const std::string& call) {
  MPI_Message message = MPI_MESSAGE_NULL;
  poll([&] {
    int flag = 0;
    check_mpi(MPI_Improbe(peer, tag, comm, &flag, &message, &status), call);
    return flag != 0;
  });
  return message;
}

int wait_any(std::vector<MPI_Request>& requests, const std::string& call) {
  int index = MPI_UNDEFINED;
  poll([&] {
    int flag = 0;
    check_mpi(MPI_Testany(static_cast<int>(requests.size()), requests.data(), &index, &flag, MPI_STATUS_IGNORE), call);
    return flag != 0;
  });
  return index;
}

void complete(int start, MPI_Request& request, const std::string& call) {
  check_mpi(start, call);
  wait(request, call);
}

}  // namespace einrel::comm
