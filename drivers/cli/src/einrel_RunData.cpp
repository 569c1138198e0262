#include <einrel_CounterRandom.hpp>
#include <einrel_RunData.hpp>

#include <cstdlib>
#include <memory>

namespace einrel::rundata {

using redistribute::collectively;
using redistribute::Communicator;
template <class Scalar>
using Distributed = redistribute::DistributedTensorRelation<Scalar, Memory>;

Sources input_sources(const Graph& graph, const RunOptions& options) {
  if (options.input && options.random_seed) throw Error("give either --input FILE or --random SEED, not both");
  if (options.random_seed && !options.bind.empty()) throw Error("--bind reads inputs from files; --random makes them");
  if (!options.input && !options.random_seed && options.bind.empty())
    throw Error("no input data: give --input FILE.h5, --bind NAME=FILE.h5:/dataset or --random SEED");
  std::map<std::string, io::DatasetSource> bound, sources;
  for (const std::string& text : options.bind) {
    auto [name, source] = io::parse_binding(text);
    const auto id = graph.find(name);
    if (!id || !graph.vertex(*id).is_input())
      throw Error("--bind names '" + name + "', which is not an input of the graph");
    if (!bound.emplace(name, source).second) throw Error("--bind names input '" + name + "' twice");
  }
  if (options.random_seed) return sources;
  for (const Vertex& v : graph.vertices()) {
    if (!v.is_input()) continue;
    if (bound.count(v.name)) {
      sources[v.name] = bound[v.name];
    } else if (options.input) {
      sources[v.name] = io::DatasetSource{*options.input, "/" + v.name};
    } else {
      throw Error("input '" + v.name + "' has no data: bind it with --bind " + v.name +
                  "=FILE.h5:/dataset or give --input");
    }
  }
  return sources;
}

std::optional<engine::FailureInjection> failure_injection() {
  if (const char* inject = std::getenv("EINREL_TEST_INJECT_FAILURE"); inject && *inject)
    return engine::parse_failure_injection(inject);
  return std::nullopt;
}

InputLoader::InputLoader(const Communicator& comm, const Graph& graph, const Sources& sources,
                         const RunOptions& options)
    : graph_(graph), sources_(sources), options_(options), files_(comm) {
  std::uint32_t stream = 0;
  for (VertexId v = 0; v < graph.size(); ++v)
    if (graph.vertex(v).is_input()) streams_[v] = stream++;
}

template <class S>
void InputLoader::fill(VertexId v, const engine::BoxedBlocks<S, Memory>& blocks, engine::ReadCall call) {
  const Vertex& vertex = graph_.vertex(v);
  if (options_.random_seed) {
    for (const auto& [box, block] : blocks)
      fill_counter_random(Exec{}, *options_.random_seed, streams_.at(v), vertex.bound, box, block.view());
    compat::fence(Exec{}, "einrel run: random inputs");
    return;
  }
  std::vector<io::HostBox> boxes;
  std::vector<HostBlock<S>> hosts;
  for (const auto& [box, block] : blocks) {
    hosts.push_back(host_view(block));
    boxes.push_back({box, hosts.back().data()});
  }
  if (call == engine::ReadCall::collective)
    files_.read(sources_.at(vertex.name), vertex.dtype, vertex.bound, boxes);
  else
    files_.read_local(sources_.at(vertex.name), vertex.dtype, boxes);
  for (std::size_t i = 0; i < blocks.size(); ++i) Kokkos::deep_copy(blocks[i].second.view(), hosts[i]);
}
template void InputLoader::fill(VertexId, const engine::BoxedBlocks<float, Memory>&, engine::ReadCall);
template void InputLoader::fill(VertexId, const engine::BoxedBlocks<double, Memory>&, engine::ReadCall);

namespace {

// A distributed value's blocks on this rank with their boxes.
template <class S>
engine::BoxedBlocks<S, Memory> boxed_blocks(const Distributed<S>& d) {
  engine::BoxedBlocks<S, Memory> blocks;
  for (const auto& [key, block] : d.local()) blocks.emplace_back(d.grid().box(key), block);
  return blocks;
}

}  // namespace

Values InputLoader::load(const Session& session) {
  const Communicator& comm = session.comm();
  Values values(graph_.size());
  for (VertexId v = 0; v < graph_.size(); ++v) {
    const Vertex& vertex = graph_.vertex(v);
    if (!vertex.is_input()) continue;
    collectively(comm,
                 [&] { engine::inject(session.options().failure, comm.rank(), vertex.name, engine::Phase::read); });
    if (session.schedule().streamed(v)) {  // read during the run; its source checked now
      if (!options_.random_seed) files_.open(sources_.at(vertex.name), vertex.dtype, vertex.bound);
      continue;
    }
    dispatch_dtype(vertex.dtype, [&](auto scalar) {
      using S = decltype(scalar);
      std::optional<Distributed<S>> d;
      collectively(comm, [&] { d = Distributed<S>::allocate(vertex.name, comm, session.schedule().layout(v)); });
      fill<S>(v, boxed_blocks(*d), engine::ReadCall::collective);
      values[v] = std::move(*d);
    });
  }
  return values;
}

engine::InputReader<Memory> InputLoader::reader() {
  return [this](VertexId v, const engine::AnyBoxedBlocks<Memory>& blocks, engine::ReadCall call) {
    std::visit([&](const auto& b) { fill(v, b, call); }, blocks);
  };
}

std::vector<std::pair<std::string, VertexId>> outputs_by_name(const Graph& graph) {
  std::vector<std::pair<std::string, VertexId>> named;
  for (VertexId v : graph.outputs()) named.emplace_back(graph.vertex(v).name, v);
  return named;
}

void inject_at_write(const engine::Options& options, int rank,
                     const std::vector<std::pair<std::string, VertexId>>& datasets) {
  for (const auto& [name, v] : datasets) engine::inject(options.failure, rank, name, engine::Phase::write);
}

void write_values(const Communicator& comm, const Graph& graph, const Values& values,
                  const std::vector<std::pair<std::string, VertexId>>& datasets, const std::string& path) {
  std::vector<io::DatasetBoxes> boxes;
  std::vector<std::shared_ptr<void>> keep;  // host copies of the blocks until written
  for (const auto& [name, v] : datasets) {
    const Vertex& vertex = graph.vertex(v);
    io::DatasetBoxes out{name, vertex.dtype, vertex.bound, {}};
    std::visit(
        [&](const auto& d) {
          for (const auto& [key, block] : d.local()) {
            const Extent b = d.grid().id(key);
            if (d.layout().placement().site(b, 0) != comm.rank()) continue;
            auto host = std::make_shared<std::decay_t<decltype(host_view(block))>>(host_view(block));
            Kokkos::deep_copy(*host, block.view());
            out.boxes.push_back({d.grid().box(key), host->data()});
            keep.push_back(host);
          }
        },
        *values[v]);
    boxes.push_back(std::move(out));
  }
  io::write_boxes(comm, path, boxes);
}

}  // namespace einrel::rundata
