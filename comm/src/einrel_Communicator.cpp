#include <einrel_Communicator.hpp>
#include <einrel_Error.hpp>
#include <einrel_Wait.hpp>

#include <algorithm>
#include <cstdint>

namespace einrel::comm {

void check_mpi(int rc, const std::string& call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  throw Error(call + " failed: " + (length > 0 ? std::string(text, length) : "MPI error " + std::to_string(rc)));
}

Communicator::Communicator(MPI_Comm comm) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw Error("einrel needs MPI to be initialized before it is given a communicator");
  auto* dup = new MPI_Comm(MPI_COMM_NULL);
  const int rc = MPI_Comm_dup(comm, dup);
  if (rc != MPI_SUCCESS) {
    delete dup;
    check_mpi(rc, "MPI_Comm_dup");
  }
  own(dup);
}

Communicator Communicator::adopt(MPI_Comm owned) {
  Communicator c;
  c.own(new MPI_Comm(owned));
  return c;
}

void Communicator::own(MPI_Comm* comm) {
  comm_.reset(comm, [](MPI_Comm* c) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && *c != MPI_COMM_NULL) MPI_Comm_free(c);
    delete c;
  });
  check_mpi(MPI_Comm_set_errhandler(*comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(*comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(*comm_, &size_), "MPI_Comm_size");
}

namespace {
std::uint64_t agreements = 0;  // agree_on_failure's calls (MPI is used from one thread)
}  // namespace

std::uint64_t agreements_made() { return agreements; }

void agree_on_failure(const Communicator& comm, const std::optional<std::string>& local_failure) {
  // The lowest failing rank (size when none failed) speaks for everyone.
  const int mine = local_failure ? comm.rank() : comm.size();
  int speaker = comm.size();
  ++agreements;
  MPI_Request request;
  complete(MPI_Iallreduce(&mine, &speaker, 1, MPI_INT, MPI_MIN, comm.get(), &request), request, "MPI_Iallreduce");
  if (speaker == comm.size()) return;
  throw Error(broadcast_string(comm, comm.rank() == speaker ? *local_failure : std::string(), speaker));
}

std::string broadcast_string(const Communicator& comm, std::string text, int root, int piece) {
  if (piece < 1) throw Error("broadcast_string: pieces of at least one character");
  // The length in 64 bits and the text in pieces of MPI's int counts.
  std::uint64_t length = text.size();
  MPI_Request request;
  complete(MPI_Ibcast(&length, 1, MPI_UINT64_T, root, comm.get(), &request), request, "MPI_Ibcast");
  text.resize(static_cast<std::size_t>(length));
  for (std::size_t at = 0; at < text.size();) {
    const int n = static_cast<int>(std::min(text.size() - at, static_cast<std::size_t>(piece)));
    complete(MPI_Ibcast(text.data() + at, n, MPI_CHAR, root, comm.get(), &request), request, "MPI_Ibcast");
    at += static_cast<std::size_t>(n);
  }
  return text;
}

Gathered allgather_varying(const Communicator& comm, const std::vector<long long>& mine, std::int64_t piece) {
  if (piece < 1 || piece > INT_MAX)
    throw Error("allgather_varying: pieces of 1 to " + std::to_string(INT_MAX) + " values, not " +
                std::to_string(piece));
  const int n = comm.size();
  const auto count = static_cast<long long>(mine.size());
  std::vector<long long> counts(static_cast<std::size_t>(n));
  MPI_Request request;
  complete(MPI_Iallgather(&count, 1, MPI_LONG_LONG, counts.data(), 1, MPI_LONG_LONG, comm.get(), &request), request,
           "MPI_Iallgather");
  Gathered all;
  all.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
  for (int r = 0; r < n; ++r) all.offsets[r + 1] = all.offsets[r] + counts[r];
  all.values.resize(static_cast<std::size_t>(all.offsets[n]));
  // Round k moves values [k step, (k + 1) step) of every rank; n step <= INT_MAX keeps its displacements ints.
  // Every rank knows every count, so all make the same rounds; one round receives in place.
  const std::int64_t step = std::max<std::int64_t>(1, std::min<std::int64_t>(piece, INT_MAX / n));
  const std::int64_t most = *std::max_element(counts.begin(), counts.end());
  const bool in_place = most <= step;
  std::vector<int> round_counts(static_cast<std::size_t>(n)), displs(static_cast<std::size_t>(n));
  std::vector<long long> buffer;
  for (std::int64_t at = 0; at < most; at += step) {
    for (int r = 0; r < n; ++r) {
      round_counts[r] = static_cast<int>(std::clamp<std::int64_t>(counts[r] - at, 0, step));
      displs[r] = r == 0 ? 0 : displs[r - 1] + round_counts[r - 1];
    }
    if (!in_place) buffer.resize(static_cast<std::size_t>(displs[n - 1] + round_counts[n - 1]));
    long long* into = in_place ? all.values.data() : buffer.data();
    complete(MPI_Iallgatherv(mine.data() + std::min<std::int64_t>(at, count), round_counts[comm.rank()], MPI_LONG_LONG,
                             into, round_counts.data(), displs.data(), MPI_LONG_LONG, comm.get(), &request),
             request, "MPI_Iallgatherv");
    if (in_place) continue;
    for (int r = 0; r < n; ++r)
      std::copy_n(buffer.begin() + displs[r], round_counts[r], all.values.begin() + all.offsets[r] + at);
  }
  return all;
}

int ranks_per_node(const Communicator& comm) {
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int size = 0, local = 0, me = comm.rank(), first = 0;
  MPI_Comm_size(node, &size);
  MPI_Comm_rank(node, &local);
  const int rc = MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  check_mpi(rc, "MPI_Allreduce");
  // Ordered by rank (the split's key), the node's ranks are first, first + 1, ... exactly when each is
  // first + its place; and every node equally large, starting at a multiple of its size.
  const int mine[3] = {size, -size, first % size == 0 && me == first + local ? 1 : 0};
  int all[3] = {0, 0, 0};
  check_mpi(MPI_Allreduce(mine, all, 3, MPI_INT, MPI_MIN, comm.get()), "MPI_Allreduce");
  return all[0] == -all[1] && all[2] == 1 ? size : 0;
}

template <>
MPI_Datatype mpi_datatype<float>() {
  return MPI_FLOAT;
}
template <>
MPI_Datatype mpi_datatype<double>() {
  return MPI_DOUBLE;
}

}  // namespace einrel::comm
