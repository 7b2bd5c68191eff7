// /v1/markets and /v1/market-groups (docs/api.md "Market catalog", "Market-
// groups"): JSON encodings of the immutable catalog, built once per
// (sport, nested, groups, lang) and kept with their gzip form and weak
// ETag, so a request costs a lookup and a copy. Owned by the REST thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "engine/catalog.h"

namespace oddsrelay::rest {

class CatalogViews {
 public:
  static constexpr size_t kMaxCached = 16'384;  // answers kept; cleared whole past it

  explicit CatalogViews(CatalogPtr catalog) : catalog_(std::move(catalog)) {}

  struct Encoded {
    std::string body, gz, etag;  // etag: W/"<16 hex>"
  };
  // `lang`: an index into the catalog's languages (resolved by the caller).
  const Encoded& markets(std::optional<int32_t> sport, bool nested, bool groups, int lang);
  // `echo_lang`: whether the request named a language (then data.lang is set).
  const Encoded& market_groups(std::optional<int32_t> sport, int lang, bool echo_lang);

  const Catalog& catalog() const { return *catalog_; }
  size_t cached() const { return cache_.size(); }

 private:
  const Encoded& finish(std::string key, std::string body);
  CatalogPtr catalog_;
  std::unordered_map<std::string, Encoded> cache_;
};

}  // namespace oddsrelay::rest
