#include <einrel_BoxCopy.hpp>
#include <einrel_CounterRandom.hpp>
#include <einrel_Hdf5Shapes.hpp>
#include <einrel_RunData.hpp>

#include <cmath>
#include <cstdlib>
#include <memory>

namespace einrel::cli {

using comm::collectively;
using comm::Communicator;
template <class Scalar>
using Distributed = redistribute::DistributedTensorRelation<Scalar, Memory>;

Sources input_sources(const Graph& graph, const RunOptions& options, Sources given) {
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
  if (options.random_seed) return given;
  for (const Vertex& v : graph.vertices()) {
    if (!v.is_input()) continue;
    if (given.count(v.name)) {
      sources[v.name] = given[v.name];
    } else if (bound.count(v.name)) {
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

namespace {

// The random stream of input number `input`'s shape: apart from the streams of the inputs' elements.
constexpr std::uint32_t shape_stream(std::uint32_t input) { return 0x80000000u | input; }

// A block is present when its counter_random value u (index: the block's id) has (u + 1) / 2 < density.
BlockShape random_shape(const Bound& bound, Extent tile, std::uint64_t seed, std::uint32_t input, double density) {
  const BlockGrid grid = BlockGrid::tiles(bound, tile);
  std::vector<bool> present(static_cast<std::size_t>(grid.num_blocks()));
  for (Extent b = 0; b < grid.num_blocks(); ++b)
    present[static_cast<std::size_t>(b)] =
        (counter_random<double>(seed, shape_stream(input), static_cast<std::uint64_t>(b)) + 1) / 2 < density;
  return BlockShape(grid, std::move(present));
}

// Collective: the shape whose present blocks (of edge `tile`) hold a non-zero element of `source`, with each
// block's Frobenius norm (for --screen). Each rank reads every R-th block; the ranks then agree on the mask.
BlockShape zero_block_shape(const Communicator& comm, io::InputFiles& files, const io::DatasetSource& source,
                            Dtype dtype, const Bound& bound, Extent tile) {
  const BlockGrid grid = BlockGrid::tiles(bound, tile);
  std::vector<unsigned char> mine(static_cast<std::size_t>(grid.num_blocks()), 0), all(mine.size());
  std::vector<double> squares(mine.size(), 0.0), norms(mine.size());
  dispatch_dtype(dtype, [&](auto scalar) {
    using S = decltype(scalar);
    std::vector<std::vector<S>> data;
    std::vector<io::HostBox> boxes;
    std::vector<Extent> ids;
    for (Extent b = comm.rank(); b < grid.num_blocks(); b += comm.size()) {
      const Box box = grid.box(grid.key(b));
      data.emplace_back(static_cast<std::size_t>(box.size()));
      ids.push_back(b);
    }
    for (std::size_t i = 0; i < ids.size(); ++i) boxes.push_back({grid.box(grid.key(ids[i])), data[i].data()});
    files.read(source, dtype, bound, boxes);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const auto b = static_cast<std::size_t>(ids[i]);
      mine[b] = std::any_of(data[i].begin(), data[i].end(), [](S x) { return x != 0; });
      for (S x : data[i]) squares[b] += static_cast<double>(x) * static_cast<double>(x);
    }
  });
  MPI_Request request;
  comm::complete(MPI_Iallreduce(mine.data(), all.data(), static_cast<int>(all.size()), MPI_UNSIGNED_CHAR, MPI_MAX,
                                comm.get(), &request),
                 request, "MPI_Iallreduce");
  comm::complete(MPI_Iallreduce(squares.data(), norms.data(), static_cast<int>(norms.size()), MPI_DOUBLE, MPI_SUM,
                                comm.get(), &request),
                 request, "MPI_Iallreduce");
  // Rounded up a little, so that the bound holds whatever order the squares were summed in.
  for (double& x : norms) x = std::sqrt(x) * (1 + 1e-12);
  return BlockShape(grid, std::vector<bool>(all.begin(), all.end()), std::move(norms));
}

// Sets to zero the elements of `block` (the box `box` of its tensor) that lie in absent blocks of `shape`:
// the shape is the truth about a sparse input, whatever its source holds there. Asynchronous on Exec.
template <class S>
void zero_absent(const BlockShape& shape, const Box& box, const Tensor<S, Memory>& block) {
  if (box.empty()) return;
  for_each_overlap(shape.grid(), box, [&](const std::vector<Extent>& key, const Box& part) {
    if (shape.present(shape.grid().id(key))) return;
    std::vector<Extent> lo(part.lo.size());
    for (std::size_t d = 0; d < lo.size(); ++d) lo[d] = part.lo[d] - box.lo[d];
    fill_box(Exec{}, block, lo, part.extents(), S(0));
  });
}

}  // namespace

void bind_input_shapes(const Communicator& comm, Graph& graph, const Sources& sources,
                       const std::optional<std::uint64_t>& random_seed, const SparseOptions& options) {
  std::unique_ptr<io::InputFiles> files;  // for --drop-zero-blocks
  std::uint32_t input = 0;
  for (VertexId v = 0; v < graph.size(); ++v) {
    const Vertex& vertex = graph.vertex(v);
    if (!vertex.is_input()) continue;
    const std::uint32_t position = input++;
    if (!vertex.sparse) continue;
    std::optional<BlockShape> shape;
    if (random_seed) {
      collectively(comm, [&] {
        if (!options.random_density)
          throw Error("sparse input '" + vertex.name +
                      "' needs --random-density F with --random: the fraction of "
                      "its blocks that are present");
        shape = random_shape(vertex.bound, options.tile, *random_seed, position, *options.random_density);
      });
    } else {
      const io::DatasetSource& source = sources.at(vertex.name);
      shape = io::read_block_shape(comm, source, vertex.bound);
      if (!shape && options.drop_zero_blocks) {
        if (!files) files = std::make_unique<io::InputFiles>(comm);
        shape = zero_block_shape(comm, *files, source, vertex.dtype, vertex.bound, options.tile);
      }
      collectively(comm, [&] {
        if (!shape)
          throw Error("sparse input '" + vertex.name + "' has no block shape: '" + source.file + "' has no dataset '" +
                      io::mask_dataset(source.dataset) + "' or '" + io::norms_dataset(source.dataset) +
                      "' (docs/sparse.md); give one, or --drop-zero-blocks");
      });
    }
    graph.bind_shape(v, std::move(*shape));
  }
}

std::optional<engine::FailureInjection> failure_injection() {
  if (const char* inject = std::getenv("EINREL_TEST_INJECT_FAILURE"); inject && *inject)
    return engine::parse_failure_injection(inject);
  return std::nullopt;
}

void open_input_files(io::InputFiles& files, const Graph& graph, const Sources& sources) {
  for (const Vertex& vertex : graph.vertices())
    if (vertex.is_input() && sources.count(vertex.name))
      files.open(sources.at(vertex.name), vertex.dtype, vertex.bound);
}

InputLoader::InputLoader(io::InputFiles& files, const Graph& graph, const Sources& sources, const RunOptions& options)
    : graph_(graph), sources_(sources), options_(options), files_(files) {
  std::uint32_t stream = 0;
  for (VertexId v = 0; v < graph.size(); ++v)
    if (graph.vertex(v).is_input()) streams_[v] = stream++;
}

template <class S>
void InputLoader::fill(VertexId v, const engine::BoxedBlocks<S, Memory>& blocks, engine::ReadCall call) {
  const Vertex& vertex = graph_.vertex(v);
  if (options_.random_seed && !sources_.count(vertex.name)) {
    for (const auto& [box, block] : blocks)
      fill_counter_random(Exec{}, *options_.random_seed, streams_.at(v), vertex.bound, box, block.view());
  } else {
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
  if (vertex.shape)
    for (const auto& [box, block] : blocks) zero_absent(*vertex.shape, box, block);
  compat::fence(Exec{}, "einrel run: inputs");
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
      if (sources_.count(vertex.name)) files_.open(sources_.at(vertex.name), vertex.dtype, vertex.bound);
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

double scalar_value(const Communicator& comm, const engine::AnyDistributed<Memory>& value) {
  double mine = 0;
  std::visit(
      [&](const auto& d) {
        for (const auto& [key, block] : d.local())
          if (d.layout().placement().site(d.grid().id(key), 0) == comm.rank()) {
            const auto host = host_view(block);
            Kokkos::deep_copy(host, block.view());
            mine = static_cast<double>(host(0));
          }
      },
      value);
  double sum = 0;
  MPI_Request request;
  comm::complete(MPI_Iallreduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, comm.get(), &request), request, "MPI_Iallreduce");
  return sum;
}

std::vector<std::pair<std::string, VertexId>> outputs_by_name(const Graph& graph) {
  std::vector<std::pair<std::string, VertexId>> named;
  for (VertexId v : graph.outputs()) named.emplace_back(graph.vertex(v).name, v);
  return named;
}

void inject_at_write(const engine::PipelineOptions& options, int rank,
                     const std::vector<std::pair<std::string, VertexId>>& datasets) {
  for (const auto& [name, v] : datasets) engine::inject(options.failure, rank, name, engine::Phase::write);
}

void write_values(const Communicator& comm, const Graph& graph, const Values& values,
                  const std::vector<std::pair<std::string, VertexId>>& datasets, const std::string& path,
                  const std::vector<bool>& masked, const std::vector<std::pair<std::string, double>>& scalars) {
  std::vector<io::DatasetBoxes> boxes;
  std::vector<std::string> zero_filled;
  std::vector<io::DatasetMask> mask_datasets;
  std::vector<std::shared_ptr<void>> keep;  // host copies of the blocks until written
  for (const auto& [name, v] : datasets) {
    const Vertex& vertex = graph.vertex(v);
    io::DatasetBoxes out{name, vertex.dtype, vertex.bound, {}};
    const bool with_mask = v < masked.size() && masked[v];
    std::visit(
        [&](const auto& d) {
          const redistribute::Placement& placement = d.layout().placement();
          if (placement.has_absent()) zero_filled.push_back(out.name);
          if (with_mask) {
            io::DatasetMask& m = mask_datasets.emplace_back();
            m.name = out.name + ".mask";
            m.dims = d.grid().parts();
            for (Extent b = 0; b < d.grid().num_blocks(); ++b) m.values.push_back(placement.absent(b) ? 0 : 1);
          }
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
  std::vector<double> scalar_values;  // written by rank 0
  scalar_values.reserve(scalars.size());
  for (const auto& [name, value] : scalars) {
    scalar_values.push_back(value);
    io::DatasetBoxes out{name, Dtype::f64, {}, {}};
    if (comm.rank() == 0) out.boxes.push_back({Box{{}, {}}, &scalar_values.back()});
    boxes.push_back(std::move(out));
  }
  io::write_boxes(comm, path, boxes, zero_filled, mask_datasets);
}

}  // namespace einrel::cli
