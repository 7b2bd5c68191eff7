// Where the running server's catalog comes from, and how it is replaced
// while serving: --catalog FILE is read again on SIGHUP and on a schedule
// (tools/oddsrelay/catalog_reload.h), and a file whose bytes differ and
// that parses is published for the REST thread (rest/catalog_views.h),
// which picks it up on its next catalog request. A file that does not
// parse leaves the published catalog as it was. Without a file the
// catalog built into the binary is published once and never changes.
#pragma once

#include <string>

#include "engine/catalog/catalog.h"
#include "engine/core/published.h"

namespace oddsrelay {

class CatalogSource {
 public:
  // `path` empty: the built-in catalog. Throws (one line) when the first
  // load fails: a bad file at start is a start-up error.
  explicit CatalogSource(std::string path);

  enum class Reload { Unchanged, Replaced, Failed, Builtin };
  // Reads the file again (the one writer thread only). `note` gets one line
  // saying what happened (no trailing newline).
  Reload reload(std::string& note);

  const Published<Catalog>& published() const { return published_; }
  CatalogPtr current() const { return published_.load(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  Published<Catalog> published_;
  uint64_t digest_;  // of the published catalog; writer only
};

}  // namespace oddsrelay
