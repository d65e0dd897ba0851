// faults.hpp - fault injection in the device (issue 13 item 2; docs/faults.md).
//
// A FaultInjector belongs to one Device. It holds the armed fault specs
// (hw::FaultRequest: packet faults, operation and command failures, RNR storms,
// token expiry, vanished peers) and the fault PRNG, and it is the only place
// faults are decided and counted. The kinds that act at once on an object (QP to
// error, kill connection, CQ overrun, EQ storm) are carried out by the kInjectFault
// handler (commands.cpp), which reports them through record() as well.
//
// Specs come from two places:
//   - kInjectFault commands (SoftNdkInjectFault, softndk_faults.h). They belong to the
//     context that sent them and go when it detaches (or on kRemoveFault). They reach
//     only that consumer's objects (Device::same_consumer): its QPs' packets (the
//     sending QP's at transmit, the receiving QP's at receive), work requests and
//     commands, so one consumer of a daemon cannot fault another's;
//   - SOFTNDK_FAULTS=FILE, read when the device starts (load_environment()): device-
//     wide specs (context 0) that stay for the device's life. parse_fault_file()
//     reads the INI format of docs/faults.md; its errors read FILE:LINE: [SECTION] KEY.
//
// Determinism: every probabilistic decision draws from one splitmix64 stream seeded
// with SOFTNDK_SEED (default 0) mixed with the adapter's if_index, so two adapters of
// one process do not mirror each other. The same seed and the same sequence of
// matching packets give the same decisions; the order in which concurrent threads
// present packets is not the injector's to fix (simulated time, issue 13 item 1).
// A spec only draws for packets it matches, and draws nothing when its probability
// is certain, so adding a certain spec does not shift another spec's decisions.
//
// Every injected fault goes through record(): it bumps faults_injected and the
// kind's counter and logs the fault with its model time at info through the device
// logger. Issue 14's trace hooks there.
//
// Threading: one mutex, taken with a QP lock held or none; under it the injector only
// looks contexts up (Device::same_consumer, find_qp: the object-table lock, a leaf).
// Packets are handed to the caller's send or deliver function after it is dropped.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "device/counters.hpp"
#include "fabric/fabric.hpp"
#include "softndk/hw_interface.hpp"

namespace softndk::emu {

class Device;

// One armed spec.
struct FaultSpec {
    uint32_t id = 0;
    uint32_t context = 0;  // 0: from SOFTNDK_FAULTS (device-wide)
    hw::FaultRequest request{};
    uint32_t remaining = 0;  // injections left; 0 with `unlimited`
    bool unlimited = false;
    std::string name;
};

// Parses a fault file's text (docs/faults.md). False with "ORIGIN:LINE: [SECTION] KEY:
// what" in `error` on the first bad section, key or value.
bool parse_fault_text(std::string_view text, const std::string &origin,
                      std::vector<hw::FaultRequest> &out, std::string &error);
// Same for the file at `path`.
bool parse_fault_file(const std::string &path, std::vector<hw::FaultRequest> &out,
                      std::string &error);
// Names used by the file format and the logs.
std::string_view fault_kind_name(hw::FaultKind kind);

class FaultInjector {
  public:
    FaultInjector(Device &device, uint64_t seed);
    FaultInjector(const FaultInjector &) = delete;
    FaultInjector &operator=(const FaultInjector &) = delete;

    // SOFTNDK_SEED (decimal or 0x hex; unset: 0). Throws std::runtime_error on garbage.
    static uint64_t seed_from_environment();
    // Reads SOFTNDK_FAULTS if set; throws std::runtime_error with the parser's message.
    void load_environment();

    // Validates and arms `spec` for `context`: STATUS_INVALID_PARAMETER for a kind that
    // is not armed here (the immediate kinds) or a bad field. `id` receives its id.
    int32_t add(uint32_t context, const hw::FaultRequest &spec, uint32_t &id);
    // kRemoveFault: one spec of `context` (id != 0) or all of them.
    int32_t remove(uint32_t context, uint32_t id);
    void context_gone(uint32_t context);
    size_t armed() const;
    // Anything armed or held: the packet hooks may act (packet coalescing is off then).
    bool active() const { return active_.load(std::memory_order_acquire); }

    using SendFn = std::function<void(Packet &&)>;
    using DeliverFn = std::function<void(Packet &)>;
    // Device::transmit: a packet leaving `qp` (the sending QP). Calls `send` for the
    // packet and whatever the faults add (a duplicate, a held packet), in order; a
    // delayed packet is sent from the device's timer queue later.
    // `context` owns `qp`.
    void transmit(uint32_t qp, uint32_t context, Packet &&packet, const SendFn &send);
    // Device::receive: a packet that reached the device for QP `dest_qp`. A corrupted
    // packet fails the ICRC check here and is dropped (icrc_errors). Calls `deliver`
    // for what the engine should see, in order.
    void receive(Packet &packet, const DeliverFn &deliver);
    // CM messages: false if the peer's address vanished (the message is dropped).
    bool cm_passes(const wire::IpAddr &peer);
    // kPeerVanish (armed by the command handler, which knows `qp`'s peer): from now
    // on nothing reaches `peer` from this device and nothing from it is taken.
    void vanish(uint32_t context, uint32_t qp, const wire::IpAddr &peer, uint32_t &id);

    // The engine's questions (QP lock held). Each answer that injects is recorded.
    // A send-queue WQE of `opcode` (or a receive) on `qp` is about to run: the
    // syndrome it must fail with, if a kFailOperation spec takes it.
    // `context` owns `qp`.
    std::optional<hw::Syndrome> fail_operation(uint32_t qp, uint32_t context,
                                               hw::FaultOperation operation, uint64_t now_ns);
    // A SEND is arriving at `qp` at model time `now_ns`: true if an RNR storm answers it.
    bool rnr_storm(uint32_t qp, uint32_t context, uint64_t now_ns);
    // A remote access names `token` at `now_ns`: true if it expired.
    bool token_expired(uint32_t token, uint64_t now_ns);
    // A command is about to run: the NTSTATUS it must fail with, if a spec takes it.
    // (`context` sends it.)
    std::optional<int32_t> fail_command(hw::CommandOpcode opcode, uint32_t context);

    // The one function every injected fault goes through (counters, log; the trace of
    // issue 14 hooks here). `object` is the QP (or CQ) number, 0 if none.
    void record(hw::FaultKind kind, uint32_t object, uint64_t model_ns, std::string_view detail);

    // The next PRNG draw (tests of determinism).
    uint64_t draw();

  private:
    enum class Hook : uint8_t { kTransmit, kReceive };
    struct PacketAction {
        hw::FaultKind kind{};
        uint64_t delay_ns = 0;
        std::string name;
    };
    // Whether `spec` reaches objects of `context` (file specs reach everything).
    bool applies_locked(const FaultSpec &spec, uint32_t context) const;
    bool fires_locked(FaultSpec &spec);
    // active_ = anything armed or held: the hooks' lock-free fast path when not.
    void update_active_locked();
    void retire_spent_locked();
    std::optional<PacketAction> packet_fault_locked(Hook hook, uint32_t qp, uint32_t context,
                                                    const Packet &packet);
    bool vanished_locked(const wire::IpAddr &ip) const;
    static std::shared_ptr<Packet> copy_of(const Packet &packet);

    Device &device_;
    mutable std::mutex mutex_;
    uint64_t state_;  // splitmix64
    std::vector<FaultSpec> specs_;
    uint32_t next_id_ = 1;
    std::vector<std::pair<uint32_t, wire::IpAddr>> vanished_;  // (spec id, peer address)
    std::shared_ptr<Packet> held_tx_, held_rx_;                // kPacketReorder
    std::atomic<bool> active_{false};
};

}  // namespace softndk::emu
