// ini.hpp - the INI reader of profiles (profile.hpp) and SOFTNDK_CONFIG (config.hpp).
//
// libinih parses; this adds what both formats need for their error messages: the
// line of every key and of every section header. Syntax (inih's): `[section]`,
// `key = value`, comments start with `;` or `#` at the start of a line and with ` ;`
// after a value; a line longer than kMaxIniLine is an error (inih would cut it).
//
// Errors read "ORIGIN:LINE: [SECTION] KEY: what" - ini_error() builds them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace softndk::emu {

inline constexpr size_t kMaxIniLine = 198;  // inih's INI_MAX_LINE (200) less "\n\0"

struct IniEntry {
    std::string section;
    std::string key;
    std::string value;  // inline comment and surrounding blanks removed
    int line = 0;
};

struct IniSection {
    std::string name;
    int line = 0;
};

struct IniDocument {
    std::string origin;                // the file name errors start with
    std::vector<IniSection> sections;  // in file order, repeated headers included
    std::vector<IniEntry> entries;     // in file order
};

// Parses `text`; `origin` names it in errors. False with `error` set on a syntax
// error (a line inih rejects, or one too long).
bool parse_ini(std::string_view text, std::string origin, IniDocument &out, std::string &error);
// The whole file at `path`; false with "PATH: cannot open: why" in `error`.
bool read_text_file(const std::string &path, std::string &text, std::string &error);
// Reads and parses the file at `path` (its name as given is the origin).
bool read_ini_file(const std::string &path, IniDocument &out, std::string &error);

// "ORIGIN:LINE: [SECTION] KEY: message"; without a key "ORIGIN:LINE: [SECTION] message";
// line 0 leaves the line out.
std::string ini_error(const IniDocument &doc, int line, std::string_view section,
                      std::string_view key, std::string_view message);

// An unsigned number, decimal or 0x hexadecimal, within [min, max]. False with the
// reason in `error` ("'x' is not a number", "5000 is out of range 0..4096").
bool parse_ini_number(std::string_view text, uint64_t min, uint64_t max, uint64_t &out,
                      std::string &error);

}  // namespace softndk::emu
