#include "device/ini.hpp"

#include <ini.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace softndk::emu {
namespace {

// inih reads through this one line per call, so `line` is the number of the line
// the handler's key is on.
struct Reader {
    std::string_view text;
    size_t pos = 0;
    int line = 0;
    IniDocument *doc = nullptr;
    std::string error;  // the first handler error
    int error_line = 0;
};

char *read_line(char *buffer, int size, void *stream) {
    auto &r = *static_cast<Reader *>(stream);
    if (r.pos >= r.text.size()) return nullptr;
    size_t end = r.text.find('\n', r.pos);
    end = end == std::string_view::npos ? r.text.size() : end + 1;
    const std::string_view line = r.text.substr(r.pos, end - r.pos);
    r.pos = end;
    ++r.line;
    // parse_ini checked every line fits; inih's buffer is INI_MAX_LINE.
    const size_t n = std::min(line.size(), static_cast<size_t>(size - 1));
    std::memcpy(buffer, line.data(), n);
    buffer[n] = '\0';
    // A section header: inih reports sections only with their keys.
    const size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && line[first] == '[') {
        const size_t close = line.find(']', first);
        if (close != std::string_view::npos)
            r.doc->sections.push_back(
                IniSection{std::string(line.substr(first + 1, close - first - 1)), r.line});
    }
    return buffer;
}

int on_entry(void *user, const char *section, const char *name, const char *value) {
    auto &r = *static_cast<Reader *>(user);
    r.doc->entries.push_back(IniEntry{section, name, value, r.line});
    return 1;
}

}  // namespace

bool parse_ini(std::string_view text, std::string origin, IniDocument &out, std::string &error) {
    out = IniDocument{};
    out.origin = std::move(origin);
    int number = 0;
    for (size_t pos = 0; pos <= text.size();) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        ++number;
        if (end - pos > kMaxIniLine) {
            error = out.origin + ":" + std::to_string(number) + ": line longer than " +
                    std::to_string(kMaxIniLine) + " characters";
            return false;
        }
        pos = end + 1;
    }
    Reader reader{text, 0, 0, &out, {}, 0};
    const int result = ini_parse_stream(read_line, &reader, on_entry, &reader);
    if (result > 0) {
        error = out.origin + ":" + std::to_string(result) + ": not 'key = value' or '[section]'";
        return false;
    }
    if (result < 0) {
        error = out.origin + ": out of memory parsing INI";
        return false;
    }
    return true;
}

bool read_text_file(const std::string &path, std::string &text, std::string &error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = path + ": cannot open: " + std::strerror(errno);
        return false;
    }
    std::ostringstream all;
    all << in.rdbuf();
    text = all.str();
    return true;
}

bool read_ini_file(const std::string &path, IniDocument &out, std::string &error) {
    std::string text;
    return read_text_file(path, text, error) && parse_ini(text, path, out, error);
}

std::string ini_error(const IniDocument &doc, int line, std::string_view section,
                      std::string_view key, std::string_view message) {
    std::string out = doc.origin;
    if (line > 0) out += ":" + std::to_string(line);
    out += ": [" + std::string(section) + "] ";
    if (!key.empty()) out += std::string(key) + ": ";
    out += message;
    return out;
}

bool parse_ini_number(std::string_view text, uint64_t min, uint64_t max, uint64_t &out,
                      std::string &error) {
    int base = 10;
    std::string_view digits = text;
    if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
        base = 16;
        digits.remove_prefix(2);
    }
    uint64_t value = 0;
    const auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
    if (digits.empty() || ec == std::errc::invalid_argument ||
        end != digits.data() + digits.size()) {
        error = "'" + std::string(text) + "' is not a number";
        return false;
    }
    if (ec == std::errc::result_out_of_range || value < min || value > max) {
        error = std::string(text) + " is out of range " + std::to_string(min) + ".." +
                std::to_string(max);
        return false;
    }
    out = value;
    return true;
}

}  // namespace softndk::emu
