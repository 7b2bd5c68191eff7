#include "engine/catalog/catalog_source.h"

#include <stdexcept>

namespace oddsrelay {

CatalogSource::CatalogSource(std::string path)
    : path_(std::move(path)),
      published_(path_.empty() ? Catalog::builtin() : Catalog::load_file(path_)),
      digest_(published_.load()->digest()) {}

CatalogSource::Reload CatalogSource::reload(std::string& note) {
  if (path_.empty()) {
    note = "catalog: built in, nothing to reload";
    return Reload::Builtin;
  }
  CatalogPtr old = published_.load();
  CatalogPtr fresh;
  try {
    fresh = Catalog::load_file(path_);
  } catch (const std::exception& e) {
    note = "catalog reload failed, keeping " + old->version() + " (" + std::to_string(old->markets().size()) +
           " markets): " + e.what();
    return Reload::Failed;
  }
  if (fresh->digest() == digest_) {
    note = "catalog " + old->version() + " unchanged";
    return Reload::Unchanged;
  }
  note = "catalog reloaded: " + old->version() + " -> " + fresh->version() + ", " +
         std::to_string(fresh->markets().size()) + " markets, " + std::to_string(fresh->outcome_ids()) + " outcomes, " +
         std::to_string(fresh->sports().size()) + " sports";
  digest_ = fresh->digest();
  published_.publish(std::move(fresh));
  return Reload::Replaced;
}

}  // namespace oddsrelay
