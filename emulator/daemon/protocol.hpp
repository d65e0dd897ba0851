// protocol.hpp - the daemon's control socket (docs/daemon.md).
//
// Transport: a Unix-domain STREAM socket, one connection ("session") per
// DaemonClient, i.e. per adapter a consumer process opens. Requests and responses
// are the fixed-size structs of hw_interface.hpp §11, byte for byte:
//
//   client -> daemon   request struct (CommandHeader first; request_bytes = its size),
//                      sent with ONE sendmsg; fds (registered memory) ride on it as
//                      SCM_RIGHTS, at most kMaxFds
//   daemon -> client   ResponseFrame, then response_bytes of the response struct; the
//                      fds it names (queue memory) ride on the frame as SCM_RIGHTS
//
// A client sends its next request only after it has read the previous response.
// The daemon validates request_bytes before it reads the body: outside
// [sizeof(CommandHeader), kMaxRequestBytes] it answers STATUS_INVALID_PARAMETER and
// closes the session (the stream cannot be resynchronised). Unknown opcodes and
// wrong sizes for a known opcode get an error response and the session goes on.
//
// MemoryHandles in daemon mode: fd_index names the fd passed with the same message,
// offset is the file offset of the first byte, embedded_address is 0 (the daemon
// never reveals its addresses, and ignores - refuses - any it is sent).
//
// Daemon-only commands use opcodes the device never defines (>= 0x7f00).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "daemon/memfd.hpp"
#include "softndk/hw_interface.hpp"

namespace softndk::emu {
class Device;
}

namespace softndk::emu::daemon {

inline constexpr uint16_t kMaxRequestBytes = 1024;
inline constexpr size_t kMaxFds = 8;
// How long a client spins for a command's answer before it blocks
// (await_readable_briefly): most answers take a few microseconds of daemon work, a
// connect's or a large registration's longer, and beyond this the sleep costs little
// beside the wait.
inline constexpr uint64_t kReplySpinNs = 50'000;

// Status of the daemon and (if_index != 0) of one of its adapters: lets a client
// check the adapter exists before attaching, and tests check that a dead client's
// context is gone.
inline constexpr hw::CommandOpcode kDaemonStatus = static_cast<hw::CommandOpcode>(0x7f01);
struct DaemonStatusRequest {
    hw::CommandHeader header;
    uint32_t if_index;
    uint32_t reserved;
};
struct DaemonStatusResponse {
    hw::ResponseHeader header;
    uint32_t daemon_pid;
    uint32_t sessions;  // open control connections
    uint32_t adapters;
    uint32_t adapter_found;      // 1 if if_index names an adapter
    uint32_t adapter_contexts;   // its live contexts (Device::context_count)
    uint32_t serviced_contexts;  // contexts the doorbell thread polls (all adapters)
    uint64_t device_sleeps;      // doorbell thread: FUTEX_WAITs so far
    uint64_t device_wakeups;     // ... of them ended by a client's FUTEX_WAKE
};

// One of the daemon's adapters, as the consumer's adapter directory
// (tools/support/softndk_adapters.h) describes it: `position` counts from 0 in the
// daemon's configuration order; the response says how many adapters there are. A
// position beyond them is STATUS_INVALID_PARAMETER. Lets a consumer list what the
// daemon serves without a configuration of its own (`softndk devices`, the examples).
// Strings are NUL-terminated (truncated to fit); costs are the values of the profile's
// [timing] keys in time::CostModel order (device/profile.hpp cost_keys()): the daemon and
// its consumers are one build, as for every command of this socket.
inline constexpr hw::CommandOpcode kDaemonAdapter = static_cast<hw::CommandOpcode>(0x7f02);
inline constexpr size_t kDaemonAdapterMaxAddresses = 8;
inline constexpr size_t kDaemonAdapterMaxCosts = 48;
struct DaemonAdapterRequest {
    hw::CommandHeader header;
    uint32_t position;
    uint32_t reserved;
};
struct DaemonAdapterResponse {
    hw::ResponseHeader header;
    uint32_t adapters;  // how many the daemon has
    uint32_t if_index;
    uint32_t path_mtu;       // bytes
    uint32_t address_count;  // in addresses[], configuration order (the first 8)
    uint8_t addresses[kDaemonAdapterMaxAddresses][16];  // IPv6; IPv4 as ::ffff:a.b.c.d
    char alias[64];
    char profile[32];          // the profile's name
    char technology[8];        // "roce" or "iwarp"
    char profile_source[256];  // "built-in" or the file the daemon loaded it from
    char profile_description[128];
    uint32_t cost_count;  // values in costs[]
    uint32_t costs[kDaemonAdapterMaxCosts];
};

inline constexpr uint32_t kResponseMagic = 0x52444e53;  // "SNDR"
struct ResponseFrame {
    uint32_t magic;
    uint16_t response_bytes;
    uint16_t fd_count;
};
static_assert(sizeof(ResponseFrame) == 8);

// The kDaemonAdapter response describing `device`, one of `adapters` (status left 0).
DaemonAdapterResponse describe_adapter(const Device &device, uint32_t adapters);

// Size of the response struct of `op` (ResponseHeader only for unknown opcodes).
size_t response_bytes_of(hw::CommandOpcode op);

// Offsets of the MemoryHandles inside the response of `op` (hw_interface.hpp §11).
std::span<const size_t> response_handles_of(hw::CommandOpcode op);

// SOFTNDK_SOCKET, else $XDG_RUNTIME_DIR/softndk.sock, else /tmp/softndk-$UID/softndk.sock
// (the daemon creates that directory 0700 and checks it: socket_security.hpp).
std::string default_socket_path();

// One sendmsg of `bytes` with `fds` as SCM_RIGHTS (MSG_NOSIGNAL). Loops over short
// writes (the fds go with the first chunk). False on error (errno set).
bool send_with_fds(int socket, std::span<const std::byte> bytes, std::span<const int> fds,
                   int flags = 0);

// Returns once `socket` is readable (or has an error or hung up) or `spin_ns` have
// passed, whichever is first, without sleeping: a nonblocking poll, then a yield of the
// CPU to any thread that wants it, in turn. A caller about to block on an answer that
// usually comes within microseconds calls it first. Blocking at once put the thread to
// sleep, and on a VM an idle vCPU halts: waking it cost more than the daemon's work
// (a command's round trip took ~50 us, MR registrations ran at 9,900/s). The yield
// keeps the spin from taking a core that another thread is waiting for. On a
// single-CPU machine it returns at once: whoever would answer needs that CPU.
void await_readable_briefly(int socket, uint64_t spin_ns);

// Whether a thread about to sleep may spin first: more than one CPU is online (on one,
// whoever would wake it needs that CPU). await_readable_briefly() and the daemon's I/O
// loop ask it.
bool spinning_pays();

// Reads exactly `bytes` (blocking), collecting any fds that arrive (MSG_CMSG_CLOEXEC).
// False on EOF or error; fds received so far stay in `fds`.
bool receive_exact(int socket, std::span<std::byte> bytes, std::vector<UniqueFd> &fds);

// Receives one response (blocking): its ResponseFrame, checked (magic, sizes), into
// `frame` and its frame.response_bytes of body into `body` (the rest of `body` is left
// alone), collecting its fds. The daemon sends a response with one sendmsg, so nearly
// always one recvmsg takes all of it: on a client's path every command pays this, and
// a frame then a body took two. The caller has at most one request outstanding (the
// daemon sends nothing but responses), so the stream holds nothing past this response:
// bytes beyond it are a protocol error. False on EOF, error or a bad frame (errno set:
// EPROTO for a bad frame or extra bytes); fds received so far stay in `fds`.
bool receive_response(int socket, ResponseFrame &frame, std::span<std::byte, kMaxRequestBytes> body,
                      std::vector<UniqueFd> &fds);

// One recvmsg of up to `bytes` (flags e.g. MSG_DONTWAIT); appends fds. Returns what
// recvmsg returned (-1 with errno). `truncated` is set if fds were dropped (MSG_CTRUNC).
ssize_t receive_some(int socket, std::span<std::byte> bytes, std::vector<UniqueFd> &fds, int flags,
                     bool &truncated);

}  // namespace softndk::emu::daemon
