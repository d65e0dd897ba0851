// sim.hpp - `softndk sim`: runs a program in simulated time under many seeds (a seed sweep)
// or replays one seed with its trace (docs/simulation.md).
//
//   softndk sim --seeds 1..1000 [--jobs N] [--faults FILE] [--json] -- PROGRAM ARGS...
//   softndk sim --replay SEED [--trace FILE] [--pcap FILE] [--faults FILE] -- PROGRAM ARGS...
//
// Each run is PROGRAM with SOFTNDK_TIME=simulated, SOFTNDK_SEED=<seed> (and SOFTNDK_FAULTS),
// started without address-space randomisation. A run passes when it exits 0; it deadlocked
// when the scheduler ended it with sim::kDeadlockExitCode, ran out of simulated time with
// sim::kTimeLimitExitCode, hung when it outlived --timeout wall seconds (killed), and failed
// otherwise (another exit status or a signal).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace softndk::tool {

struct SimOptions {
    std::string seeds = "1..100";  // A..B or one number
    std::string replay;            // a seed: run it once in the foreground
    unsigned jobs = 0;             // 0: one per core
    std::string faults;            // SOFTNDK_FAULTS for every run
    std::string trace;             // --replay: SOFTNDK_SIM_TRACE (default softndk-sim-SEED.trace)
    std::string pcap;              // --replay: SOFTNDK_PCAP
    unsigned timeout_seconds = 60;
    bool json = false;
    std::vector<std::string> command;  // PROGRAM ARGS...
};

// Runs the sweep or the replay; returns the tool's exit code (0: every run passed).
int run_sim(const SimOptions &options);

}  // namespace softndk::tool
