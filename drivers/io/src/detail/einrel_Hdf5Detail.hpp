#ifndef EINREL_HDF5DETAIL_HPP
#define EINREL_HDF5DETAIL_HPP

// Internal to einrel::io: the handles, type checks and error messages of the parallel reader and writer
// (einrel_ParallelHdf5), which the tests' serial helper (unit_tests/einrel_TestHdf5) shares so that both
// report the same errors.

#include <einrel_Bound.hpp>
#include <einrel_Dtype.hpp>

#include <hdf5.h>

#include <string>

namespace einrel::io::detail {

// Owns one HDF5 identifier (an invalid one, id < 0, owns nothing). Movable, not copyable.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  Handle& operator=(Handle&& other) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { close(); }

  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  // Closes the identifier now; returns false when HDF5 reports a failure (the identifier is gone either way).
  bool close();

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// einrel reports HDF5 failures as Errors; HDF5's own error-stack printing would only add noise.
void silence_hdf5();

// The reason the OS or MPI-IO gave for the failure of the HDF5 call just made ("No space left on device",
// "Permission denied"), from HDF5's error stack, or empty: HDF5's own messages say only what failed. Call it before
// any other HDF5 call, which would clear the stack.
std::string failure_reason();
// `failure` and, where there is one, ": " and the failure_reason().
std::string with_reason(const std::string& failure, const std::string& reason = failure_reason());

// The HDF5 memory type of a dtype.
hid_t native_type(Dtype t);

// The dataset's name as error messages give it: a root dataset by its bare name ("A" for "/A" or "A"), a
// dataset inside a group by its full path ("/group/A").
std::string display_name(const std::string& dataset);

// True when every link on the way to `path` exists (H5Lexists fails, rather than answering no, when a group
// on the way is missing).
bool link_exists(hid_t file, const std::string& path);

// Opens `dataset` (a bare root name, or an absolute path "/group/A") in an open file and checks that it
// exists, is a dataset, and has `dtype` and shape `bound` (0-d: a scalar dataspace). Throws Error whose
// message starts with `where` ("input file 'in.h5'") and names the dataset and the difference.
Handle open_checked_dataset(hid_t file, const std::string& where, const std::string& dataset, Dtype dtype,
                            const Bound& bound);

}  // namespace einrel::io::detail

#endif
