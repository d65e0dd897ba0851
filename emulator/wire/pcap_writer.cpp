// pcap_writer.cpp - classic pcap records.
#include "wire/pcap_writer.hpp"

#include <algorithm>
#include <array>

namespace softndk::wire {
namespace {

template <std::size_t N>
void put_le32(std::array<char, N> &buf, std::size_t off, std::uint32_t v) {
    for (std::size_t i = 0; i < 4; ++i)
        buf[off + i] = static_cast<char>(v >> (8 * i));
}

}  // namespace

PcapWriter::PcapWriter(std::ostream &out, PcapTimestamp resolution, std::uint32_t snaplen)
    : out_(out), resolution_(resolution), snaplen_(snaplen) {
    std::array<char, 24> hdr{};
    put_le32(hdr, 0, resolution == PcapTimestamp::kNanoseconds ? 0xA1B23C4Du : 0xA1B2C3D4u);
    put_le32(hdr, 4, 2u | (4u << 16));  // version 2.4 (major, minor as two LE u16)
    // 8: thiszone = 0, 12: sigfigs = 0
    put_le32(hdr, 16, snaplen);
    put_le32(hdr, 20, kLinktypeEthernet);
    out_.write(hdr.data(), hdr.size());
}

bool PcapWriter::write(std::uint64_t time_ns, std::span<const std::uint8_t> frame) {
    const auto orig_len =
        static_cast<std::uint32_t>(std::min<std::size_t>(frame.size(), UINT32_MAX));
    const std::uint32_t incl_len = std::min(orig_len, snaplen_);
    const std::uint64_t sub_ns = time_ns % 1'000'000'000u;
    std::array<char, 16> rec{};
    put_le32(rec, 0, static_cast<std::uint32_t>(time_ns / 1'000'000'000u));
    put_le32(rec, 4,
             static_cast<std::uint32_t>(
                 resolution_ == PcapTimestamp::kNanoseconds ? sub_ns : sub_ns / 1000u));
    put_le32(rec, 8, incl_len);
    put_le32(rec, 12, orig_len);
    out_.write(rec.data(), rec.size());
    out_.write(reinterpret_cast<const char *>(frame.data()), incl_len);
    return out_.good();
}

}  // namespace softndk::wire
