#ifndef EINREL_RUNSUMMARY_HPP
#define EINREL_RUNSUMMARY_HPP

#include <einrel_RunReport.hpp>
#include <einrel_Traffic.hpp>

#include <ostream>
#include <string>
#include <vector>

// What `einrel run` and `einrel plan` print for people: the run summary and the per-rank table.
namespace einrel::cli {

// "0.012345 s": how run output prints every time.
std::string seconds_text(double seconds);

// The per-rank table of the summary and of `einrel plan --ranks` (the largest figures only beyond 16 ranks).
void print_rank_table(const std::vector<engine::RankTraffic>& ranks, std::ostream& out);

// The human-readable summary `einrel run` prints.
void print_summary(const io::RunReport& report, std::ostream& out);

}  // namespace einrel::cli

#endif
