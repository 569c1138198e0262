#ifndef EINREL_BENCHOPTIONS_HPP
#define EINREL_BENCHOPTIONS_HPP

// The `--key value` command line of the plain-CBLAS peers (blas_peer.cpp, gemm_epilogue.cpp).

#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <string>

namespace einrel::bench {

class Options {
 public:
  // Exits with status 2 and `usage` on an unknown key or a key without a value.
  Options(int argc, char** argv, const std::set<std::string>& known, std::string usage) : usage_(std::move(usage)) {
    for (int i = 1; i < argc; i += 2) {
      if (!known.count(argv[i]) || i + 1 >= argc) fail();
      values_[argv[i]] = argv[i + 1];
    }
  }
  long number(const std::string& key, long fallback) const {
    const auto it = values_.find(key);
    return it == values_.end() ? fallback : std::stol(it->second);
  }
  std::string text(const std::string& key, const std::string& fallback) const {
    const auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  [[noreturn]] void fail() const {
    std::cerr << "usage: " << usage_ << "\n";
    std::exit(2);
  }

 private:
  std::string usage_;
  std::map<std::string, std::string> values_;
};

}  // namespace einrel::bench

#endif
