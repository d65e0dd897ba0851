#include "rc/placement.hpp"

#include <algorithm>

namespace softndk::emu::rc {

void scatter(std::span<const DmaRange> sges, uint64_t offset, std::span<const uint8_t> data) {
    size_t at = 0;
    for (const DmaRange &sge : sges) {
        if (at == data.size()) break;
        if (offset >= sge.length()) {
            offset -= sge.length();
            continue;
        }
        const uint64_t take = std::min<uint64_t>(data.size() - at, sge.length() - offset);
        sge.copy_to(offset, data.data() + at, take);
        at += take;
        offset = 0;
    }
}

bool DeferredPlacement::same_target(std::span<const DmaRange> sges) const {
    if (sges.size() != sges_.size()) return false;
    for (size_t i = 0; i < sges.size(); ++i) {
        if (sges[i].translation() != sges_[i].translation() || sges[i].iova() != sges_[i].iova() ||
            sges[i].length() != sges_[i].length())
            return false;
    }
    return true;
}

void DeferredPlacement::place(std::span<const DmaRange> sges, uint64_t offset,
                              std::span<const uint8_t> data) {
    if (!deferring_) return scatter(sges, offset, data);
    if (data.empty()) return;
    const bool continues = length_ != 0 && offset == offset_ + length_ &&
                           data.data() == data_ + length_ && same_target(sges);
    if (continues) {
        length_ += data.size();
        return;
    }
    flush();
    sges_.assign(sges.begin(), sges.end());
    offset_ = offset;
    data_ = data.data();
    length_ = data.size();
}

void DeferredPlacement::flush() {
    if (length_ == 0) return;
    scatter(sges_, offset_, {data_, length_});
    length_ = 0;
    sges_.clear();  // lets go of the translations (the vector keeps its capacity)
}

}  // namespace softndk::emu::rc
