// env.hpp - every environment variable SoftNDK reads, in one table: `softndk
// --help` lists them, `softndk env` prints them with their values in this
// process (like `fi_info -e`). A variable a source file reads with
// getenv("SOFTNDK_...") belongs here; a CTest greps the sources and fails when
// one is missing.
#pragma once

#include <span>
#include <string>

namespace softndk::tool {

struct EnvironmentVariable {
    const char *name;     // "SOFTNDK_MODE"
    const char *values;   // what it takes, with its default: "embedded (default) | daemon"
    const char *meaning;  // one sentence
};

// All of them, in the order `softndk env` and --help print them.
std::span<const EnvironmentVariable> environment_variables();

// The "Environment:" footer of --help: each name, its values and meaning.
std::string environment_help();

// `softndk env [-v]`: one line per variable, `NAME=value` (or `# NAME is unset`),
// with -v its values and meaning above it as comments. Prints to stdout;
// returns 0.
int run_env(bool verbose);

}  // namespace softndk::tool
