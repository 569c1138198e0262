// Parallel HDF5: every rank writes and reads its own boxes of one file (uneven block grids, ranks with
// no boxes, datasets in groups, scalars), checked against the serial reader and writer; errors agreed on
// every rank; nothing left behind on failure.
#include <einrel_Error.hpp>
#include <einrel_Hdf5Transfer.hpp>
#include <einrel_ParallelHdf5.hpp>
#include <einrel_TestHdf5.hpp>

#include <einrel_TestHelpers.hpp>
#include <einrel_TestTempDir.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <random>

namespace {

using namespace einrel;
using comm::Communicator;

// Blocks of `grid` dealt to ranks round-robin starting at rank `first`, so that with more ranks than
// blocks some ranks have none and with fewer some have several.
std::vector<Box> my_boxes(const Communicator& comm, const BlockGrid& grid, int first) {
  std::vector<Box> boxes;
  for (Extent b = 0; b < grid.num_blocks(); ++b)
    if ((b + first) % comm.size() == comm.rank()) boxes.push_back(grid.box(grid.key(b)));
  return boxes;
}

// The elements of `box` of a C-order tensor of bound `bound`.
template <class Scalar>
std::vector<Scalar> cut(const std::vector<Scalar>& whole, const Bound& bound, const Box& box) {
  std::vector<Scalar> out;
  test::for_each_element(box, bound, std::vector<Extent>(box.lo.size(), 0),
                         [&](Extent flat) { out.push_back(whole[flat]); });
  return out;
}

TEST(ParallelHdf5, EveryRankWritesAndReadsItsOwnBoxes) {
  const Communicator comm(MPI_COMM_WORLD);
  test::TempDir dir;
  const Bound a_bound{13, 7}, b_bound{5, 4, 3};
  const auto a = test::random_values<double>(a_bound, 1);
  const auto b = test::random_values<float>(b_bound, 2);
  const std::vector<double> s = {-2.5};
  const BlockGrid a_grid(a_bound, {4, 3}), b_grid(b_bound, {2, 1, 3});

  // Write: each rank its boxes; the scalar from the last rank only.
  std::vector<std::vector<double>> a_parts;
  std::vector<std::vector<float>> b_parts;
  io::DatasetBoxes a_out{"A", Dtype::f64, a_bound, {}}, b_out{"B", Dtype::f32, b_bound, {}},
      s_out{"s", Dtype::f64, {}, {}};
  const auto a_boxes = my_boxes(comm, a_grid, 0), b_boxes = my_boxes(comm, b_grid, 1);
  a_parts.reserve(a_boxes.size());
  b_parts.reserve(b_boxes.size());
  for (const Box& box : a_boxes) {
    a_parts.push_back(cut(a, a_bound, box));
    a_out.boxes.push_back({box, a_parts.back().data()});
  }
  for (const Box& box : b_boxes) {
    b_parts.push_back(cut(b, b_bound, box));
    b_out.boxes.push_back({box, b_parts.back().data()});
  }
  if (comm.rank() == comm.size() - 1) s_out.boxes.push_back({Box{}, s.data()});
  io::write_boxes(comm, dir.file("t.h5"), {a_out, b_out, s_out});
  if (comm.rank() == 0) {
    EXPECT_EQ(std::get<std::vector<double>>(io::read_dataset(dir.file("t.h5"), "A", Dtype::f64, a_bound)), a);
    EXPECT_EQ(std::get<std::vector<float>>(io::read_dataset(dir.file("t.h5"), "B", Dtype::f32, b_bound)), b);
    EXPECT_EQ(std::get<std::vector<double>>(io::read_dataset(dir.file("t.h5"), "s", Dtype::f64, {})), s);
    EXPECT_EQ(dir.count(), 1u);  // no temporary left behind
  }

  // Read another cut back on every rank (different counts per rank than the write).
  const BlockGrid read_grid(a_bound, {3, 2});
  const auto boxes = my_boxes(comm, read_grid, 2);
  std::vector<std::vector<double>> got(boxes.size());
  std::vector<io::HostBox> targets;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    got[i].assign(static_cast<std::size_t>(boxes[i].size()), 0.0);
    targets.push_back({boxes[i], got[i].data()});
  }
  io::InputFiles(comm).read({dir.file("t.h5"), "/A"}, Dtype::f64, a_bound, targets);
  for (std::size_t i = 0; i < boxes.size(); ++i) EXPECT_EQ(got[i], cut(a, a_bound, boxes[i]));
  double scalar = 0;
  std::vector<io::HostBox> scalar_target;
  if (comm.rank() == 0) scalar_target.push_back({Box{}, &scalar});
  io::InputFiles(comm).read({dir.file("t.h5"), "/s"}, Dtype::f64, {}, scalar_target);
  if (comm.rank() == 0) {
    EXPECT_EQ(scalar, s[0]);
  }
}

// Regression: a file of many small datasets, each cut differently, with ranks holding different numbers
// of boxes per dataset (collective transfers hung here; the transfers are independent now).
TEST(ParallelHdf5, ManySmallDatasetsRoundTrip) {
  const Communicator comm(MPI_COMM_WORLD);
  test::TempDir dir;
  std::vector<Bound> bounds;
  std::vector<std::vector<double>> values;
  std::vector<std::vector<Box>> boxes;
  std::vector<std::vector<std::vector<double>>> parts;
  std::vector<io::DatasetBoxes> out;
  for (int k = 0; k < 60; ++k) {
    bounds.push_back(k % 5 == 0 ? Bound{} : k % 2 ? Bound{7, 1 + k % 4} : Bound{1 + k % 3, 13});
    values.push_back(test::random_values<double>(bounds.back(), 100 + k));
    const Bound parts_of = bounds.back().empty() ? Bound{} : Bound{std::min<Extent>(bounds.back()[0], 1 + k % 4), 1};
    boxes.push_back(my_boxes(comm, BlockGrid(bounds.back(), parts_of), k));
  }
  parts.resize(60);
  for (int k = 0; k < 60; ++k) {
    io::DatasetBoxes d{"d" + std::to_string(k), Dtype::f64, bounds[k], {}};
    for (const Box& box : boxes[k]) parts[k].push_back(cut(values[k], bounds[k], box));
    for (std::size_t i = 0; i < boxes[k].size(); ++i) d.boxes.push_back({boxes[k][i], parts[k][i].data()});
    out.push_back(std::move(d));
  }
  io::write_boxes(comm, dir.file("many.h5"), out);
  io::InputFiles files(comm);  // the file is opened once for all 60 reads
  for (int k = 0; k < 60; ++k) {
    // Read back with the boxes dealt from another rank.
    const auto mine = my_boxes(comm, BlockGrid(bounds[k], Bound(bounds[k].size(), 1)), k + 1);
    std::vector<std::vector<double>> got(mine.size());
    std::vector<io::HostBox> targets;
    for (std::size_t i = 0; i < mine.size(); ++i) {
      got[i].resize(static_cast<std::size_t>(mine[i].size()));
      targets.push_back({mine[i], got[i].data()});
    }
    files.read({dir.file("many.h5"), "/d" + std::to_string(k)}, Dtype::f64, bounds[k], targets);
    for (std::size_t i = 0; i < mine.size(); ++i) EXPECT_EQ(got[i], values[k]) << "dataset " << k;
  }
}

// Tensors of 0-4 dimensions cut by random grids, blocks dealt to random ranks (some with none, some with many),
// written and read back through whichever transfer this run uses (ctest registers the program with
// EINREL_HDF5_TRANSFER forced both ways): a collective transfer's one selection per rank, its runs put in file
// order and back, must give every box its own elements. Reads ask for the same box twice and for boxes that
// overlap on some ranks, which no single selection holds.
TEST(ParallelHdf5, RandomCutsRoundTripInEitherTransfer) {
  const Communicator comm(MPI_COMM_WORLD);
  test::TempDir dir;
  std::mt19937 gen(2026);  // the same draws on every rank, so every rank knows every block's owner
  auto draw = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(gen); };
  auto random_grid = [&](const Bound& bound) {
    Bound parts;
    for (Extent e : bound) parts.push_back(draw(1, static_cast<int>(e)));
    return BlockGrid(bound, parts);
  };
  for (int trial = 0; trial < 16; ++trial) {
    Bound bound;
    for (int d = draw(0, 4); d > 0; --d) bound.push_back(draw(1, 7));
    const bool single = trial % 2 == 1;
    const Dtype dtype = single ? Dtype::f32 : Dtype::f64;
    const auto values = test::random_values<double>(bound, 500 + trial);
    // The file's tensor: the drawn blocks hold `values`, a block drawn for no rank (owner == size) stays zero.
    std::vector<double> expected(values.size(), 0.0);
    std::vector<std::vector<double>> doubles;
    std::vector<std::vector<float>> floats;
    io::DatasetBoxes out{"T", dtype, bound, {}};
    const BlockGrid grid = random_grid(bound);
    for (Extent b = 0; b < grid.num_blocks(); ++b) {
      const Box box = grid.box(grid.key(b));
      const int owner = draw(0, comm.size());
      if (owner == comm.size()) continue;
      const auto part = cut(values, bound, box);
      std::size_t i = 0;
      test::for_each_element(box, bound, std::vector<Extent>(box.lo.size(), 0),
                             [&](Extent flat) { expected[flat] = part[i++]; });
      if (owner != comm.rank()) continue;
      doubles.push_back(part);
      floats.emplace_back(part.begin(), part.end());
      out.boxes.push_back({box, single ? static_cast<const void*>(floats.back().data()) : doubles.back().data()});
    }
    if (single)
      for (double& x : expected) x = static_cast<float>(x);
    const std::string path = dir.file("t" + std::to_string(trial) + ".h5");
    io::write_boxes(comm, path, {out}, {"T"});  // zero-filled: what no rank writes reads as zero
    if (comm.rank() == 0) {
      const auto whole = io::read_dataset(path, "T", dtype, bound);
      if (single)
        EXPECT_EQ(
            std::vector<double>(std::get<std::vector<float>>(whole).begin(), std::get<std::vector<float>>(whole).end()),
            expected)
            << "trial " << trial;
      else
        EXPECT_EQ(std::get<std::vector<double>>(whole), expected) << "trial " << trial;
    }

    // Read back by another grid; odd ranks also ask for their first box twice (an overlap, read independently).
    const BlockGrid read_grid = random_grid(bound);
    std::vector<Box> wanted;
    for (Extent b = 0; b < read_grid.num_blocks(); ++b)
      if (draw(0, comm.size() - 1) == comm.rank()) wanted.push_back(read_grid.box(read_grid.key(b)));
    if (comm.rank() % 2 == 1 && !wanted.empty()) wanted.push_back(wanted.front());
    std::vector<std::vector<double>> got_d(wanted.size());
    std::vector<std::vector<float>> got_f(wanted.size());
    std::vector<io::HostBox> targets;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      got_d[i].resize(static_cast<std::size_t>(wanted[i].size()));
      got_f[i].resize(got_d[i].size());
      targets.push_back({wanted[i], single ? static_cast<void*>(got_f[i].data()) : got_d[i].data()});
    }
    io::InputFiles files(comm);
    files.read({path, "/T"}, dtype, bound, targets);
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      const std::vector<double> got = single ? std::vector<double>(got_f[i].begin(), got_f[i].end()) : got_d[i];
      EXPECT_EQ(got, cut(expected, bound, wanted[i])) << "trial " << trial << ", box " << i;
    }
  }
}

// EINREL_HDF5_TRANSFER takes independent (the default) or collective; anything else is the same error on every rank.
TEST(ParallelHdf5, TheTransferIsChosenAlikeOnEveryRank) {
  const Communicator comm(MPI_COMM_WORLD);
  const char* before = std::getenv("EINREL_HDF5_TRANSFER");
  const std::string saved = before ? before : "";
  setenv("EINREL_HDF5_TRANSFER", "collective", 1);
  EXPECT_EQ(io::detail::choose_transfer(comm), io::detail::Transfer::collective);
  setenv("EINREL_HDF5_TRANSFER", "independent", 1);
  EXPECT_EQ(io::detail::choose_transfer(comm), io::detail::Transfer::independent);
  unsetenv("EINREL_HDF5_TRANSFER");
  EXPECT_EQ(io::detail::choose_transfer(comm), io::detail::Transfer::independent);
  setenv("EINREL_HDF5_TRANSFER", "sometimes", 1);
  try {
    io::detail::choose_transfer(comm);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "EINREL_HDF5_TRANSFER='sometimes': expected independent or collective");
  }
  // A rank that asks for independent transfers wins over ranks that ask for collective ones.
  setenv("EINREL_HDF5_TRANSFER", comm.rank() == comm.size() - 1 ? "independent" : "collective", 1);
  EXPECT_EQ(io::detail::choose_transfer(comm), io::detail::Transfer::independent);
  if (before)
    setenv("EINREL_HDF5_TRANSFER", saved.c_str(), 1);
  else
    unsetenv("EINREL_HDF5_TRANSFER");
}

// Streamed inputs: every rank opens a dataset together, then each reads its own boxes alone, one call per box
// and a different number of calls per rank (independent transfers, no communication); a read of a dataset not
// opened, or of a box outside it, fails on the rank that makes it.
TEST(ParallelHdf5, RanksReadAnOpenedDatasetAlone) {
  const Communicator comm(MPI_COMM_WORLD);
  test::TempDir dir;
  const Bound bound{11, 6};
  const auto x = test::random_values<double>(bound, 5);
  io::DatasetBoxes out{"X", Dtype::f64, bound, {}};
  if (comm.rank() == 0) out.boxes.push_back({Box{{0, 0}, bound}, x.data()});
  io::write_boxes(comm, dir.file("x.h5"), {out});
  const io::DatasetSource source{dir.file("x.h5"), "/X"};
  io::InputFiles files(comm);
  EXPECT_THROW(files.read_local(source, Dtype::f64, {}), Error);  // not opened yet
  files.open(source, Dtype::f64, bound);
  const BlockGrid grid(bound, {11, 1});
  for (Extent row = 0; row <= static_cast<Extent>(comm.rank()) && row < 11; ++row) {
    const Box box = grid.box(grid.key((row * 3 + static_cast<Extent>(comm.rank())) % 11));
    std::vector<double> got(static_cast<std::size_t>(box.size()));
    files.read_local(source, Dtype::f64, {{box, got.data()}});
    EXPECT_EQ(got, cut(x, bound, box));
  }
  std::vector<double> outside(6);
  EXPECT_THROW(files.read_local(source, Dtype::f64, {{Box{{11, 0}, {12, 6}}, outside.data()}}), Error);
}

TEST(ParallelHdf5, ReadsADatasetInsideGroups) {
  const Communicator comm(MPI_COMM_WORLD);
  test::TempDir dir;
  const Bound bound{6, 5};
  const auto x = test::random_values<double>(bound, 3);
  if (comm.rank() == 0) {
    const hid_t file = H5Fcreate(dir.file("g.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const hsize_t dims[2] = {6, 5};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t d = H5Dcreate2(file, "/layer/w", H5T_NATIVE_DOUBLE, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x.data());
    H5Dclose(d);
    H5Sclose(space);
    H5Pclose(lcpl);
    H5Fclose(file);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const auto boxes = my_boxes(comm, BlockGrid(bound, {2, 2}), 0);
  std::vector<std::vector<double>> got(boxes.size());
  std::vector<io::HostBox> targets;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    got[i].resize(static_cast<std::size_t>(boxes[i].size()));
    targets.push_back({boxes[i], got[i].data()});
  }
  io::InputFiles files(comm);
  EXPECT_NE(test::error_of([&] {
              files.read({dir.file("g.h5"), "/layer/v"}, Dtype::f64, bound, {});
            }).find("has no dataset '/layer/v'"),
            std::string::npos);
  EXPECT_NE(test::error_of([&] {
              files.read({dir.file("g.h5"), "/other/w"}, Dtype::f64, bound, {});
            }).find("has no dataset '/other/w'"),
            std::string::npos);
  // The open file is still usable after the failures.
  files.read({dir.file("g.h5"), "/layer/w"}, Dtype::f64, bound, targets);
  for (std::size_t i = 0; i < boxes.size(); ++i) EXPECT_EQ(got[i], cut(x, bound, boxes[i]));
}

// Every rank gets the same message, whichever rank's boxes are involved.
TEST(ParallelHdf5, ErrorsAreTheSameOnEveryRankAndLeaveNothing) {
  const Communicator comm(MPI_COMM_WORLD);
  test::TempDir dir;
  const Bound bound{4, 4};
  std::vector<double> zeros(16, 0.0);
  io::DatasetBoxes out{"A", Dtype::f64, bound, {}};
  if (comm.rank() == 0) out.boxes.push_back({Box{{0, 0}, {4, 4}}, zeros.data()});
  io::write_boxes(comm, dir.file("in.h5"), {out});

  auto read = [&](const std::string& file, const std::string& dataset, Dtype dtype, const Bound& b) {
    return test::error_of([&] { io::InputFiles(comm).read({file, dataset}, dtype, b, {}); });
  };
  EXPECT_NE(read(dir.file("nope.h5"), "/A", Dtype::f64, bound)
                .find("input file '" + dir.file("nope.h5") + "' does not exist"),
            std::string::npos);
  EXPECT_NE(read(dir.file("in.h5"), "/B", Dtype::f64, bound).find("has no dataset 'B' at its root"), std::string::npos);
  EXPECT_NE(read(dir.file("in.h5"), "/A", Dtype::f32, bound).find("is float64 but the graph declares f32"),
            std::string::npos);
  EXPECT_NE(read(dir.file("in.h5"), "/A", Dtype::f64, {4, 5}).find("has shape [4,4] but the graph declares [4,5]"),
            std::string::npos);
  if (comm.rank() == 0) std::ofstream(dir.file("text.h5")) << "not hdf5";
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_NE(read(dir.file("text.h5"), "/A", Dtype::f64, bound).find("is not a readable HDF5 file"), std::string::npos);

  // An output in a missing directory: the same error everywhere, no file anywhere.
  EXPECT_NE(test::error_of([&] {
              io::write_boxes(comm, dir.file("no-dir/out.h5"), {out});
            }).find("cannot create output file '" + dir.file("no-dir/out.h5") + "'"),
            std::string::npos);
  MPI_Barrier(MPI_COMM_WORLD);
  if (comm.rank() == 0) {
    EXPECT_EQ(dir.count(), 2u);
  }
}

// The output's space is reserved before HDF5 writes anything (a disk that fills inside HDF5's collective close
// fails it on some ranks only, and the others wait there for ever): an output larger than the file system can
// hold fails at once, the same on every rank, and leaves nothing; a written file keeps none of the reserve past
// its end.
TEST(ParallelHdf5, AnOutputsSpaceIsReservedBeforeItIsWritten) {
  const Communicator comm(MPI_COMM_WORLD);
  test::TempDir dir;
  const Bound huge{Extent{1} << 28, Extent{1} << 28};  // 512 PiB of f64: no file system holds it
  const std::string path = dir.file("huge.h5");
  const std::string error = test::error_of([&] { io::write_boxes(comm, path, {{"A", Dtype::f64, huge, {}}}); });
  EXPECT_EQ(error.find("cannot write output file '" + path + "' ("), 0u) << error;
  MPI_Barrier(MPI_COMM_WORLD);
  if (comm.rank() == 0) {
    EXPECT_EQ(dir.count(), 0u);
  }
  const Bound bound{300, 200};
  std::vector<double> values(300 * 200, 1.5);
  io::DatasetBoxes out{"A", Dtype::f64, bound, {}};
  if (comm.rank() == 0) out.boxes.push_back({Box{{0, 0}, {300, 200}}, values.data()});
  io::write_boxes(comm, dir.file("out.h5"), {out});
  if (comm.rank() == 0) {
    struct stat st {};
    ASSERT_EQ(::stat(dir.file("out.h5").c_str(), &st), 0);
    EXPECT_GE(st.st_size, 300 * 200 * 8);
    EXPECT_LE(static_cast<std::uintmax_t>(st.st_blocks) * 512,
              (static_cast<std::uintmax_t>(st.st_size) + 4095) / 4096 * 4096);
    EXPECT_EQ(std::get<std::vector<double>>(io::read_dataset(dir.file("out.h5"), "A", Dtype::f64, bound)), values);
  }
}

TEST(ParallelHdf5, BindingsParseFileAndDataset) {
  using io::parse_binding;
  const auto [name, source] = parse_binding("W=run:3/weights.h5:/layer/w");
  EXPECT_EQ(name, "W");
  EXPECT_EQ(source.file, "run:3/weights.h5");
  EXPECT_EQ(source.dataset, "/layer/w");
  const auto [root_name, root] = parse_binding("X=in.h5");
  EXPECT_EQ(root.file, "in.h5");
  EXPECT_EQ(root.dataset, "/X");
  for (const char* bad : {"W", "=in.h5:/w", "W=", "W=in.h5:/", "W=:/w", "W=in.h5:/layer/"})
    EXPECT_NE(test::error_of([&] { parse_binding(bad); }).find("expected NAME=FILE.h5:/dataset"), std::string::npos)
        << bad;
}

}  // namespace
