#include <einrel_AtomicFile.hpp>
#include <einrel_Error.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace einrel::io {

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), temporary_(path_ + ".einrel-tmp-" + std::to_string(::getpid())) {}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    std::error_code ignored;
    std::filesystem::remove(temporary_, ignored);
  }
}

void AtomicFile::commit() {
  std::error_code ec;
  std::filesystem::rename(temporary_, path_, ec);
  if (ec) throw Error("cannot create '" + path_ + "': " + ec.message());
  committed_ = true;
}

void AtomicFile::write_text(const std::string& text) {
  std::ofstream out(temporary_, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw Error("cannot write '" + path_ + "'");
}

}  // namespace einrel::io
