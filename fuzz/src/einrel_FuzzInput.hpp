#ifndef EINREL_FUZZINPUT_HPP
#define EINREL_FUZZINPUT_HPP

// What the fuzz targets share: the libFuzzer entry point's signature and the split of an input into
// lines, the form the text-based targets read their fields in.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace einrel::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// The input's lines ('\n' separated; the last one may be empty).
inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out(1);
  for (char c : text) {
    if (c == '\n')
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

}  // namespace einrel::fuzz

#endif
