// pcap_writer.hpp - classic libpcap capture files (LINKTYPE_ETHERNET), for Wireshark/tshark
// and the wire oracle. Record format: https://wiki.wireshark.org/Development/LibpcapFileFormat
//
// Timestamps come from the caller (the engine's virtual clock, in nanoseconds since an
// arbitrary epoch), never from the wall clock, so captures of deterministic runs are
// byte-identical. All file fields are written little-endian regardless of the host.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>

namespace softndk::wire {

enum class PcapTimestamp : std::uint8_t {
    kMicroseconds,  // magic 0xA1B2C3D4: what every tool reads
    kNanoseconds,   // magic 0xA1B23C4D: keeps the virtual clock's resolution
};

inline constexpr std::uint32_t kLinktypeEthernet = 1;

class PcapWriter {
  public:
    // Writes the 24-byte file header to `out` at once. `out` is borrowed: it must outlive
    // the writer, and should be opened in binary mode. Frames longer than `snaplen` are
    // truncated in the file (the record keeps their original length).
    explicit PcapWriter(std::ostream &out, PcapTimestamp resolution = PcapTimestamp::kNanoseconds,
                        std::uint32_t snaplen = 65535);

    // Appends one Ethernet frame (without FCS) captured at `time_ns`.
    // Returns false once the stream has failed; nothing is thrown.
    bool write(std::uint64_t time_ns, std::span<const std::uint8_t> frame);

    bool ok() const { return out_.good(); }

  private:
    std::ostream &out_;
    PcapTimestamp resolution_;
    std::uint32_t snaplen_;
};

}  // namespace softndk::wire
