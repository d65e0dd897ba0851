// profile_texts.hpp - the shipped profile files (profiles/*.ini), compiled in.
// CMake generates the definition (profile_texts.cpp.in) from the files at configure
// time and configures again when one changes.
#pragma once

#include <span>
#include <string_view>

namespace softndk::emu {

struct ProfileText {
    std::string_view name;  // the file name without .ini
    std::string_view text;
};

// Sorted by name.
std::span<const ProfileText> builtin_profile_texts();

}  // namespace softndk::emu
