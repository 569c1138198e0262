#ifndef EINREL_CALLMODEL_HPP
#define EINREL_CALLMODEL_HPP

// Which library computes a PBLAS call (docs/c-fortran.md "Which calls einrel takes"): a model of the seconds
// ScaLAPACK and einrel spend on what they do differently, from the call's global arguments alone, so that every
// process of the grid decides the same without communicating.

#include <einrel_MachineModel.hpp>

#include <cstdint>
#include <string>

namespace einrel::scalapack {

// EINREL_SCALAPACK: `off` sends every call to ScaLAPACK, `on` gives einrel every call it can take, `auto` (the
// default) the calls the model expects einrel to compute faster. Throws Error naming the accepted words.
enum class Mode { off, on, automatic };
Mode mode_from_environment();

// One call as the model sees it: C (m x n) = op(A) (m x k) op(B) (k x n), or k = 0 for one that multiplies
// nothing (p?tran_, p?geadd_: C = op(A)).
struct CallShape {
  std::int64_t m = 0, n = 0, k = 0;
  // How wide ScaLAPACK's steps along k are: the block size of op(A)'s columns (each step a local GEMM of
  // depth `panel` that reads and writes this process's part of C once).
  std::int64_t panel = 1;
  std::int64_t scalar_bytes = 8;
  int nprow = 1, npcol = 1;
  bool beta_zero = false;
  // The einrel pieces of all operands on all processes (blocks of the block-cyclic layout, merged where a
  // process holds them next to each other): what planning a new product costs grows with them.
  std::int64_t pieces = 0;
};

// What einrel's own fixed costs are on this machine (measured by perf_tests/scalapack_drivers_bench.py's
// --model-check; docs/benchmarks.md): per call besides its bytes and flops, and to plan a new product.
struct EinrelOverheads {
  double call_seconds = 4e-4;
  double plan_seconds = 2e-3;
  double plan_seconds_per_piece = 1e-5;
  // A process's part of C up to this size stays in cache between ScaLAPACK's steps (they then cost it no
  // memory traffic). A constant, not the cache the process finds: every process of a grid must decide alike.
  double cache_bytes = 16 << 20;
};

// Predicted seconds of one call on each side: what differs between them, and the flops both compute (the
// operands' traffic between processes, which both move alike, is in neither).
struct CallCosts {
  double common = 0;          // the GEMM's flops, the same on both sides (only to weigh the margin)
  double scalapack = 0;       // C read and written by every step's local GEMM
  double einrel_planned = 0;  // the call on a plan einrel keeps: copies in and out, one pass over C, its overhead
  double plan = 0;            // planning the product, where einrel keeps no plan for it
};
CallCosts predict(const CallShape& call, const engine::MachineModel& machine, const EinrelOverheads& overheads);

// How much faster einrel must be predicted before it takes a call: the model's own error.
constexpr double kWinMargin = 0.95;

// Whether einrel is expected to win a call it has a plan for (auto mode's first test, made before any
// communication).
bool einrel_may_win(const CallCosts& costs);

// Whether einrel is expected to win a call it must plan first, seen `calls` times in all (this one included):
// the plan is made once the gains of the calls seen pay for it.
bool plan_pays(const CallCosts& costs, std::int64_t calls);

// The machine model of the running process: EINREL_MACHINE names a machine file (`einrel calibrate`),
// read once; without it the model's defaults. Throws Error for a file that cannot be read.
const engine::MachineModel& machine_from_environment();

// "m x n x k" of a call, for messages.
std::string describe(const CallShape& call);
// Seconds with 3 significant digits and the unit, for messages.
std::string seconds_text(double seconds);

}  // namespace einrel::scalapack

#endif
