// softndk-rnic - the SoftNDK virtual RNIC as a daemon, the same program as
// `softndk rnic` (daemon/cli.hpp has the command line and exit codes).
#include <CLI/CLI.hpp>

#include "daemon/cli.hpp"

int main(int argc, char **argv) {
    CLI::App app{"SoftNDK virtual RNIC daemon: consumer processes attach with SOFTNDK_MODE=daemon",
                 "softndk rnic"};
    softndk::emu::daemon::RnicCommandLine command_line;
    softndk::emu::daemon::add_rnic_options(app, command_line);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        const int code = app.exit(e);  // help to stdout, errors to stderr
        return code == 0 ? 0 : 2;
    }
    return softndk::emu::daemon::run_rnic(command_line);
}
