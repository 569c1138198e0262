// einrel::Program compiled once per enabled Kokkos backend (the extern template declarations in
// einrel_Program.hpp), so that host code using it compiles only the header. Each member forwards to the
// state (einrel_ProgramState.hpp).
#include <einrel_PlanChoice.hpp>
#include <einrel_Program.hpp>
#include <einrel_ProgramState.hpp>
#include <einrel_Schedule.hpp>

#include <Kokkos_Core.hpp>

namespace einrel {

template <class E>
Program<E>::Program(MPI_Comm comm, Graph graph, const engine::Options& options)
    : state_(std::make_unique<engine::ProgramState<E>>(comm, std::move(graph), options)) {}

template <class E>
Program<E>::~Program() = default;
template <class E>
Program<E>::Program(Program&&) noexcept = default;
template <class E>
Program<E>& Program<E>::operator=(Program&&) noexcept = default;

template <class E>
const Graph& Program<E>::graph() const {
  return state_->graph();
}
template <class E>
const partition::Plan& Program<E>::plan() const {
  return state_->plan();
}
template <class E>
const engine::FittedPlan& Program<E>::fitted() const {
  return state_->fitted();
}
template <class E>
const engine::Schedule& Program<E>::schedule() const {
  return state_->schedule();
}
template <class E>
const comm::Communicator& Program<E>::comm() const {
  return state_->comm();
}
template <class E>
const engine::Traffic& Program<E>::estimate() const {
  return state_->estimate();
}
template <class E>
bool Program<E>::planned() const {
  return state_->planned();
}
template <class E>
void Program<E>::bind(const std::string& name, bool input, PieceList pieces) {
  std::visit([&](auto& list) { state_->bind(name, input, std::move(list)); }, pieces);
}
template <class E>
const engine::EngineResult<typename Program<E>::memory_space>& Program<E>::execute(const E& exec) {
  return state_->execute(exec);
}
template <class E>
const engine::EngineResult<typename Program<E>::memory_space>& Program<E>::execute() {
  return state_->execute(E{});
}
template <class E>
engine::ExecutionReport Program<E>::last_report() const {
  return state_->last_report();
}
template <class E>
const engine::AnyDistributed<typename Program<E>::memory_space>& Program<E>::output_value(const std::string& name,
                                                                                          Dtype dtype) const {
  return state_->output(name, dtype);
}
template <class E>
int Program<E>::executions() const {
  return state_->executions();
}

#ifdef KOKKOS_ENABLE_SERIAL
template class Program<Kokkos::Serial>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
template class Program<Kokkos::OpenMP>;
#endif
#ifdef KOKKOS_ENABLE_CUDA
template class Program<Kokkos::Cuda>;
#endif

}  // namespace einrel
