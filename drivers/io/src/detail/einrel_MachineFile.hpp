#ifndef EINREL_MACHINEFILE_HPP
#define EINREL_MACHINEFILE_HPP

#include <einrel_Json.hpp>
#include <einrel_MachineModel.hpp>

#include <string>

// The machine file (`--machine FILE`, written by `einrel calibrate`; docs/planner.md "The objective"): one
// JSON object with the rates of engine::MachineModel by their names.
namespace einrel {

// Reads FILE; a rate it leaves out keeps its default, but the node's rates (node_latency_seconds,
// node_seconds_per_byte) default to the network's: a file without them has one level. `ranks_per_node`, a whole
// number, is the node map planning assumes where no run finds one. Throws Error naming the file for a missing
// file, malformed JSON, an unknown name or a rate that is not positive (latencies may be 0).
engine::MachineModel read_machine_file(const std::string& path);

// The members of a machine file: the model's rates by name.
void write_machine(io::JsonWriter& j, const engine::MachineModel& machine);

}  // namespace einrel

#endif
