// /v1/markets and /v1/market-groups (the market dictionary and tab layout
// of docs/api.md): JSON encodings of the catalog, built once per (sport,
// nested, groups, lang) and kept with their gzip form and weak ETag, so a
// request costs a lookup and a reference (the bytes are shared and
// immutable: protocol/net/out_queue.h; a reload's new encodings leave the
// old ones alive for the connections still sending them). Owned by the REST thread. When a
// reload publishes another catalog (engine/catalog/catalog_source.h) the next call
// switches to it and starts the encodings over; the ETag hashes the
// catalog's bytes, so it changes exactly when the content does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "engine/catalog/catalog.h"
#include "engine/core/published.h"
#include "protocol/net/out_queue.h"

namespace oddsrelay::rest {

class CatalogViews {
 public:
  static constexpr size_t kMaxCached = 16'384;  // answers kept; cleared whole past it

  // `updates`: where reloaded catalogs are published; null: `catalog` for good.
  explicit CatalogViews(CatalogPtr catalog, const Published<Catalog>* updates = nullptr)
      : catalog_(std::move(catalog)), updates_(updates) {
    refresh();
  }

  struct Encoded {
    net::SharedBytes body, gz;  // gz: null when not worth it or failed
    std::string etag;           // W/"<16 hex>"
  };
  // `lang`: an index into the catalog's languages (resolved by the caller).
  const Encoded& markets(std::optional<int32_t> sport, bool nested, bool groups, int lang);
  // `echo_lang`: whether the request named a language (then data.lang is set).
  const Encoded& market_groups(std::optional<int32_t> sport, int lang, bool echo_lang);

  // The current catalog (switching to a newly published one first). A
  // request reads it once and passes it on.
  const Catalog& catalog() {
    refresh();
    return *catalog_;
  }
  size_t cached() const { return cache_.size(); }

 private:
  void refresh();
  // refresh(), then `lang` as an index into the current catalog's languages.
  int refresh_lang(int lang);
  const Encoded& finish(std::string key, std::string body);
  CatalogPtr catalog_;
  const Published<Catalog>* updates_;
  std::unordered_map<std::string, Encoded> cache_;
};

}  // namespace oddsrelay::rest
