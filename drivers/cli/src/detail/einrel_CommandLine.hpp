#ifndef EINREL_COMMANDLINE_HPP
#define EINREL_COMMANDLINE_HPP

// The `einrel` command line turned into one subcommand's options, without MPI, Kokkos or files: the CLI
// dispatches on the result, and the command-line fuzz target drives it directly.

#include <einrel_CalibrateCommand.hpp>
#include <einrel_GradCommand.hpp>
#include <einrel_IterateCommand.hpp>
#include <einrel_MatrixChainCommand.hpp>
#include <einrel_PlanCommand.hpp>
#include <einrel_ReshardCommand.hpp>
#include <einrel_RunCommand.hpp>
#include <einrel_TrainCommand.hpp>

#include <string>
#include <variant>
#include <vector>

namespace einrel::cli {

using CommandLine = std::variant<RunOptions, MatrixChainOptions, PlanOptions, ReshardOptions, GradOptions, TrainOptions,
                                 IterateOptions, CalibrateOptions>;

// `args` are the words after the program name: the subcommand, then its options ("--name value" or
// "--name=value") and positional arguments. Throws Error naming the first problem (an unknown command or
// option, a missing or malformed value); checks that need files or ranks are the commands' own.
CommandLine parse_command_line(std::vector<std::string> args);

}  // namespace einrel::cli

#endif
