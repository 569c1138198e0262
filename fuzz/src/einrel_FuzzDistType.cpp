// Fuzz target: `einrel reshard`'s mesh and distributed-type parsers and the synthesizer behind them. The
// input's first three lines are --mesh, --from and --to; an optional fourth is --dtype.
#include <einrel_DeviceMesh.hpp>
#include <einrel_Error.hpp>
#include <einrel_FuzzInput.hpp>
#include <einrel_ReshardCommand.hpp>

namespace {
constexpr int max_devices = 4096;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string> fields = einrel::fuzz::lines(einrel::fuzz::as_text(data, size));
  if (fields.size() < 3) return 0;
  einrel::cli::ReshardOptions options;
  options.mesh = fields[0];
  options.from = fields[1];
  options.to = fields[2];
  try {
    // The synthesizer keeps every device's coordinates on every prime axis (O(devices x axes) per candidate
    // it lowers: 0.5 s for 600,000 devices in a Release build). Larger meshes are parsed, not synthesized,
    // so that each input stays far inside the fuzzer's timeout in the sanitized Debug build.
    if (einrel::redistribute::mesh::DeviceMesh::parse(options.mesh).size() > max_devices) return 0;
    if (fields.size() > 3) {
      const auto dtype = einrel::parse_dtype(fields[3]);
      if (dtype) options.dtype = *dtype;
    }
    const einrel::redistribute::mesh::ReshardPlan plan = einrel::cli::plan_reshard(options);
    (void)einrel::cli::reshard_text(plan, options.dtype);
    (void)einrel::cli::reshard_json(plan, options.dtype);
  } catch (const einrel::Error&) {
  }
  return 0;
}
