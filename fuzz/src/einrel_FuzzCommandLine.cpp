// Fuzz target: the `einrel` command-line parser. Each input line is one word of argv after the program
// name (the subcommand first).
#include <einrel_CommandLine.hpp>
#include <einrel_Error.hpp>
#include <einrel_FuzzInput.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)einrel::cli::parse_command_line(einrel::fuzz::lines(einrel::fuzz::as_text(data, size)));
  } catch (const einrel::Error&) {
  }
  return 0;
}
