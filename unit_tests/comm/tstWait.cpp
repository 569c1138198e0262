// The yielding waits that stand for MPI's blocking calls.
#include <einrel_Communicator.hpp>
#include <einrel_Error.hpp>
#include <einrel_Wait.hpp>

#include <gtest/gtest.h>
#include <mpi.h>

#include <set>
#include <string>
#include <vector>

namespace {

using einrel::comm::Communicator;
namespace comm = einrel::comm;

// Every rank sends its rank to every rank (itself included) and receives from all of them: wait_any
// hands out each receive exactly once, then reports that none is left; wait_all completes the sends.
TEST(Wait, AllToAllMessagesCompleteOnceEach) {
  const Communicator comm(MPI_COMM_WORLD);
  const int n = comm.size();
  std::vector<int> received(n, -1);
  const int mine = comm.rank() * 10 + 7;
  std::vector<MPI_Request> receives(n, MPI_REQUEST_NULL), sends(n, MPI_REQUEST_NULL);
  for (int peer = 0; peer < n; ++peer)
    comm::check_mpi(MPI_Irecv(&received[peer], 1, MPI_INT, peer, 3, comm.get(), &receives[peer]), "MPI_Irecv");
  for (int peer = 0; peer < n; ++peer)
    comm::check_mpi(MPI_Isend(&mine, 1, MPI_INT, peer, 3, comm.get(), &sends[peer]), "MPI_Isend");
  std::set<int> seen;
  for (int k = 0; k < n; ++k) {
    const int i = comm::wait_any(receives, "MPI_Testany");
    ASSERT_GE(i, 0);
    ASSERT_LT(i, n);
    EXPECT_TRUE(seen.insert(i).second) << "request " << i << " completed twice";
    EXPECT_EQ(received[i], i * 10 + 7);
    EXPECT_EQ(receives[i], MPI_REQUEST_NULL);
  }
  EXPECT_EQ(comm::wait_any(receives, "MPI_Testany"), MPI_UNDEFINED);
  comm::wait_all(sends, "MPI_Testall");
  for (MPI_Request r : sends) EXPECT_EQ(r, MPI_REQUEST_NULL);
}

TEST(Wait, CompleteFinishesANonblockingCollective) {
  const Communicator comm(MPI_COMM_WORLD);
  const int mine = comm.rank() + 1;
  int sum = 0;
  MPI_Request request;
  comm::complete(MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, comm.get(), &request), request, "MPI_Iallreduce");
  EXPECT_EQ(sum, comm.size() * (comm.size() + 1) / 2);
  EXPECT_EQ(request, MPI_REQUEST_NULL);
}

TEST(Wait, AFailedStartIsAnErrorNamingTheCall) {
  MPI_Request request = MPI_REQUEST_NULL;
  try {
    comm::complete(MPI_ERR_ARG, request, "MPI_Ibcast");
    FAIL() << "no error";
  } catch (const einrel::Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("MPI_Ibcast failed: ", 0), 0u) << e.what();
  }
}

TEST(Wait, NothingToWaitFor) {
  std::vector<MPI_Request> none;
  comm::wait_all(none, "MPI_Testall");
  EXPECT_EQ(comm::wait_any(none, "MPI_Testany"), MPI_UNDEFINED);
  MPI_Request null = MPI_REQUEST_NULL;
  comm::wait(null, "MPI_Test");
}

}  // namespace
