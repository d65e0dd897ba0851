// softndk_provider_slots: prints provider/slots.hpp as the Markdown status
// table used in provider/README.md.
#include <cstdio>

#include "slots.hpp"

int main() {
    using namespace softndk::provider;
    size_t built = 0;
    for (const Slot &s : kSlots)
        built += s.status == SlotStatus::kBuilt ? 1 : 0;
    std::printf("| Dispatch table | Slot | Status |\n|---|---|---|\n");
    for (const Slot &s : kSlots)
        std::printf("| `%.*s` | `%.*s` | %s |\n", static_cast<int>(s.table.size()), s.table.data(),
                    static_cast<int>(s.name.size()), s.name.data(),
                    s.status == SlotStatus::kBuilt ? "built" : "not built");
    std::printf("\n%zu of %zu slots built.\n", built, kSlots.size());
    return 0;
}
