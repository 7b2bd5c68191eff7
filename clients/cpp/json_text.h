// JSON text the C++ client writes: the CLI's stdout lines and its --out
// file, in the Python client's form (json.dumps: ASCII with \u escapes;
// --out with sorted keys and ", " / ": " separators), so the two CLIs can
// be compared line for line and file for file.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "clients/cpp/stream_machine.h"

namespace oddsrelay::client {

// Appends `s` (UTF-8) as a JSON string.
void append_json_string(std::string& out, std::string_view s);
// The string, or null (Python's None) without one.
void append_json_or_null(std::string& out, const std::optional<std::string>& s);

// The --out document of a view: {"data","digest","epoch","seq"}, every
// object's keys sorted, the markets re-written from their text. False if a
// market's text is not JSON (a replica never holds one).
bool out_json(const View& v, std::string& out);

}  // namespace oddsrelay::client
