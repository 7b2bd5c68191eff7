// gzip for response bodies (zlib), used when a client accepts it and the
// body is worth it (over 1 KiB).
#pragma once

#include <string>
#include <string_view>

namespace oddsrelay::rest {

// Replaces `out` with the gzip encoding of `in`; false on a zlib failure.
bool gzip_compress(std::string_view in, std::string& out, int level = 1);

}  // namespace oddsrelay::rest
