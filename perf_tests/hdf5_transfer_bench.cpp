// Parallel HDF5 raw-data transfers, independent against collective (docs/scale.md "HDF5 transfers": the
// measurement behind einrel::io's choice between them). An N x N f64 dataset is cut into tiles of edge TILE dealt to
// the ranks round-robin (TILE 0: one block per rank on a near-square grid of the ranks, the planner's usual layout),
// and each rank writes, then reads back, its tiles through MPI-IO:
//   independent  one H5Dwrite/H5Dread per tile, H5FD_MPIO_INDEPENDENT (einrel::io's where ranks outnumber cores);
//   collective   one call per rank selecting all its tiles (a union of hyperslabs, none on a rank without
//                tiles), H5FD_MPIO_COLLECTIVE (the memory holds the selection in file order; einrel::io adds a
//                pass between it and each block's own buffer, not timed here: hdf5_run_bench.py times einrel whole);
//   posix        each rank pwrite()s / pread()s the same bytes as whole rows of a flat file, no HDF5: the
//                file system's own rate on this host, the ceiling both are quoted against.
// Each repetition runs the three in turn (alternating, so a noisy host hurts each alike); a time is the slowest
// rank's, from a barrier to the file's close; the medians are printed. Every read is checked element by element.
//   mpiexec.mpich -n 2 einrel_hdf5_transfer_bench /tmp 4096 0 7
#include <hdf5.h>
#include <mpi.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Tile {
  hsize_t row, col, rows, cols;
};

// This rank's tiles of the N x N dataset.
std::vector<Tile> my_tiles(hsize_t n, hsize_t tile, int rank, int ranks) {
  std::vector<Tile> tiles;
  if (tile == 0) {  // one block per rank on a pr x pc grid, pr the largest divisor of ranks up to its square root
    int pr = 1;
    for (int d = 1; d * d <= ranks; ++d)
      if (ranks % d == 0) pr = d;
    const int pc = ranks / pr;
    const hsize_t r = static_cast<hsize_t>(rank / pc), c = static_cast<hsize_t>(rank % pc);
    const hsize_t r0 = n * r / pr, r1 = n * (r + 1) / pr, c0 = n * c / pc, c1 = n * (c + 1) / pc;
    if (r1 > r0 && c1 > c0) tiles.push_back({r0, c0, r1 - r0, c1 - c0});
    return tiles;
  }
  const hsize_t per_side = (n + tile - 1) / tile;
  for (hsize_t t = static_cast<hsize_t>(rank); t < per_side * per_side; t += static_cast<hsize_t>(ranks)) {
    const hsize_t row = t / per_side * tile, col = t % per_side * tile;
    tiles.push_back({row, col, std::min(tile, n - row), std::min(tile, n - col)});
  }
  return tiles;
}

double value(hsize_t n, hsize_t i, hsize_t j) { return static_cast<double>(i * n + j) * 0.5 + 1; }

void check(herr_t rc, const char* what) {
  if (rc < 0) {
    std::fprintf(stderr, "hdf5_transfer_bench: %s failed\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

// The rows of the tiles in the order a transfer's memory holds them: tile by tile (independent), or the union
// selection's file order, row by row across the tiles (collective).
struct Segment {
  hsize_t row, col, cols;
};
std::vector<Segment> segments(const std::vector<Tile>& tiles, bool file_order) {
  std::vector<Segment> s;
  for (const Tile& t : tiles)
    for (hsize_t r = 0; r < t.rows; ++r) s.push_back({t.row + r, t.col, t.cols});
  if (file_order)
    std::sort(s.begin(), s.end(),
              [](const Segment& a, const Segment& b) { return a.row != b.row ? a.row < b.row : a.col < b.col; });
  return s;
}

void fill(std::vector<double>& buffer, hsize_t n, const std::vector<Segment>& order) {
  std::size_t at = 0;
  for (const Segment& s : order)
    for (hsize_t j = 0; j < s.cols; ++j) buffer[at++] = value(n, s.row, s.col + j);
}

long mismatches(const std::vector<double>& buffer, hsize_t n, const std::vector<Segment>& order) {
  long bad = 0;
  std::size_t at = 0;
  for (const Segment& s : order)
    for (hsize_t j = 0; j < s.cols; ++j) bad += buffer[at++] != value(n, s.row, s.col + j);
  return bad;
}

hid_t selection(hid_t dataset, const std::vector<Tile>& tiles) {
  const hid_t space = H5Dget_space(dataset);
  check(H5Sselect_none(space), "H5Sselect_none");
  for (const Tile& t : tiles) {
    const hsize_t start[2] = {t.row, t.col}, count[2] = {t.rows, t.cols};
    check(H5Sselect_hyperslab(space, H5S_SELECT_OR, start, nullptr, count, nullptr), "H5Sselect_hyperslab");
  }
  return space;
}

enum class Mode { independent, collective };

// Writes (write = true) or reads this rank's tiles of dataset "A" in `path` in `mode`; the file is created or
// opened and closed inside.
void transfer(const std::string& path, hsize_t n, const std::vector<Tile>& tiles, Mode mode, bool write,
              std::vector<double>& buffer) {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  check(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL), "H5Pset_fapl_mpio");
  const hid_t file =
      write ? H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl);
  check(file, "opening the file");
  const hsize_t dims[2] = {n, n};
  const hid_t whole = H5Screate_simple(2, dims, nullptr);
  const hid_t dataset = write ? H5Dcreate2(file, "A", H5T_NATIVE_DOUBLE, whole, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                              : H5Dopen2(file, "A", H5P_DEFAULT);
  check(dataset, "opening the dataset");
  const hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
  check(H5Pset_dxpl_mpio(dxpl, mode == Mode::collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT),
        "H5Pset_dxpl_mpio");
  auto move = [&](hid_t mem, hid_t file_space, double* data) {
    check(write ? H5Dwrite(dataset, H5T_NATIVE_DOUBLE, mem, file_space, dxpl, data)
                : H5Dread(dataset, H5T_NATIVE_DOUBLE, mem, file_space, dxpl, data),
          write ? "H5Dwrite" : "H5Dread");
  };
  if (mode == Mode::independent) {
    std::size_t at = 0;
    for (const Tile& t : tiles) {
      const hsize_t count = t.rows * t.cols;
      const hid_t mem = H5Screate_simple(1, &count, nullptr);
      const hid_t space = selection(dataset, {t});
      move(mem, space, buffer.data() + at);
      at += count;
      H5Sclose(space);
      H5Sclose(mem);
    }
  } else {
    const hsize_t count = std::max<hsize_t>(buffer.size(), 1);
    const hid_t mem = H5Screate_simple(1, &count, nullptr);
    if (buffer.empty()) check(H5Sselect_none(mem), "H5Sselect_none");
    const hid_t space = selection(dataset, tiles);
    double none = 0;
    move(mem, space, buffer.empty() ? &none : buffer.data());
    H5Sclose(space);
    H5Sclose(mem);
  }
  H5Pclose(dxpl);
  H5Dclose(dataset);
  H5Sclose(whole);
  check(H5Fclose(file), "H5Fclose");
  H5Pclose(fapl);
}

// The same bytes as whole rows of a flat file: rank r's share of the rows, one pwrite/pread each.
void posix(const std::string& path, hsize_t n, int rank, int ranks, bool write, std::vector<double>& rows) {
  const hsize_t r0 = n * static_cast<hsize_t>(rank) / ranks;
  if (write && rank == 0) {
    const int fd = open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    close(fd);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const int fd = open(path.c_str(), write ? O_WRONLY : O_RDONLY);
  if (fd < 0) MPI_Abort(MPI_COMM_WORLD, 1);
  const std::size_t bytes = rows.size() * sizeof(double);  // (r1 - r0) rows, allocated by the caller
  const off_t offset = static_cast<off_t>(r0 * n * sizeof(double));
  std::size_t done = 0;
  while (done < bytes) {
    char* at = reinterpret_cast<char*>(rows.data()) + done;
    const ssize_t k = write ? pwrite(fd, at, bytes - done, offset + static_cast<off_t>(done))
                            : pread(fd, at, bytes - done, offset + static_cast<off_t>(done));
    if (k <= 0) MPI_Abort(MPI_COMM_WORLD, 1);
    done += static_cast<std::size_t>(k);
  }
  close(fd);
}

double median(std::vector<double> x) {
  std::sort(x.begin(), x.end());
  return x[x.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc != 5) {
    if (rank == 0) std::fprintf(stderr, "usage: hdf5_transfer_bench DIR N TILE REPS (TILE 0: a block per rank)\n");
    MPI_Finalize();
    return 2;
  }
  const std::string dir = argv[1];
  const hsize_t n = std::strtoull(argv[2], nullptr, 10), tile = std::strtoull(argv[3], nullptr, 10);
  const int reps = std::atoi(argv[4]);
  const std::vector<Tile> tiles = my_tiles(n, tile, rank, ranks);
  std::size_t elements = 0;
  for (const Tile& t : tiles) elements += t.rows * t.cols;
  const std::string names[3] = {"independent", "collective", "posix"};
  std::vector<double> seconds[3][2];  // [mode][write, read]
  long bad = 0;
  for (int rep = 0; rep < reps; ++rep)
    for (int m = 0; m < 3; ++m)
      for (int w = 1; w >= 0; --w) {
        const bool write = w == 1;
        const std::string path = dir + "/hdf5_transfer_bench." + std::to_string(m) + (m == 2 ? ".raw" : ".h5");
        // Allocated and touched before the clock starts, as a caller's blocks are.
        const hsize_t r0 = n * static_cast<hsize_t>(rank) / ranks, r1 = n * static_cast<hsize_t>(rank + 1) / ranks;
        std::vector<double> buffer(m == 2 ? (r1 - r0) * n : elements);
        const std::vector<Segment> order = segments(tiles, m == 1);
        if (write && m < 2) fill(buffer, n, order);
        MPI_Barrier(MPI_COMM_WORLD);
        const double start = MPI_Wtime();
        if (m < 2)
          transfer(path, n, tiles, m == 0 ? Mode::independent : Mode::collective, write, buffer);
        else
          posix(path, n, rank, ranks, write, buffer);
        const double mine = MPI_Wtime() - start;
        double slowest = 0;
        MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        seconds[m][w == 1 ? 0 : 1].push_back(slowest);
        if (!write && m < 2) bad += mismatches(buffer, n, order);
      }
  long all_bad = 0;
  MPI_Reduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const double gb = static_cast<double>(n * n * sizeof(double)) / 1e9;
    std::printf("hdf5_transfer_bench: %d ranks, %llu x %llu f64 (%.3f GB), %s, %d repetitions, medians\n", ranks,
                static_cast<unsigned long long>(n), static_cast<unsigned long long>(n), gb,
                tile == 0 ? "one block per rank" : ("tiles of " + std::to_string(tile) + " dealt round-robin").c_str(),
                reps);
    for (int m = 0; m < 3; ++m)
      std::printf("  %-12s write %8.4f s (%6.2f GB/s)   read %8.4f s (%6.2f GB/s)\n", names[m].c_str(),
                  median(seconds[m][0]), gb / median(seconds[m][0]), median(seconds[m][1]), gb / median(seconds[m][1]));
    std::printf(
        "  collective / independent: write %.2f, read %.2f (below 1: collective faster); "
        "independent / posix: write %.2f, read %.2f\n",
        median(seconds[1][0]) / median(seconds[0][0]), median(seconds[1][1]) / median(seconds[0][1]),
        median(seconds[0][0]) / median(seconds[2][0]), median(seconds[0][1]) / median(seconds[2][1]));
    std::printf("  read-back mismatches: %ld\n", all_bad);
    for (int m = 0; m < 3; ++m)
      std::remove((dir + "/hdf5_transfer_bench." + std::to_string(m) + (m == 2 ? ".raw" : ".h5")).c_str());
  }
  MPI_Finalize();
  return all_bad == 0 ? 0 : 1;
}
