#include "protocol/event_id.h"

namespace oddsrelay {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Digits only, at most 19 (fits uint64), non-zero value.
bool parse_number(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (!is_digit(c)) return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v == 0) return false;
  out = v;
  return true;
}

bool all_alnum(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_alnum(c)) return false;
  return true;
}

}  // namespace

ParsedId parse_event_id(std::string_view id) {
  ParsedId r;
  if (id.empty()) return r;
  if (is_digit(id[0])) {
    if (parse_number(id, r.number)) r.form = IdForm::Numeric;
    return r;
  }
  if (id[0] != 's') return r;
  // The provider runs up to the first '-' or '_'.
  size_t sep = id.find_first_of("-_", 1);
  if (sep == std::string_view::npos) return r;
  std::string_view provider = id.substr(1, sep - 1);
  if (!all_alnum(provider)) return r;
  std::string_view rest = id.substr(sep + 1);
  IdForm form;
  if (id[sep] == '_') {
    if (rest.size() < 2) return r;
    if (rest[0] == 'l')
      form = IdForm::LiveBinding;
    else if (rest[0] == 'p')
      form = IdForm::PrematchBinding;
    else
      return r;
    rest.remove_prefix(1);
  } else {
    form = IdForm::Full;
  }
  std::string_view channel, number;
  size_t dot = rest.find('.');
  if (dot == std::string_view::npos) {
    if (form != IdForm::Full) return r;  // bindings always carry a channel
    form = IdForm::FullNoChannel;
    number = rest;
  } else {
    channel = rest.substr(0, dot);
    number = rest.substr(dot + 1);
    if (!all_alnum(channel)) return r;
  }
  if (!parse_number(number, r.number)) return r;
  r.form = form;
  r.provider = provider;
  r.channel = channel;
  return r;
}

}  // namespace oddsrelay
