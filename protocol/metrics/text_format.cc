#include "protocol/metrics/text_format.h"

#include <charconv>
#include <cmath>

namespace oddsrelay::metrics {

namespace {

const char* type_name(Type t) {
  switch (t) {
    case Type::Counter:
      return "counter";
    case Type::Gauge:
      return "gauge";
    case Type::Histogram:
      return "histogram";
  }
  return "untyped";
}

// Help text escapes backslash and newline; label values also the double quote.
void append_escaped(std::string& out, std::string_view s, bool quote) {
  for (char ch : s) {
    if (ch == '\\')
      out += "\\\\";
    else if (ch == '\n')
      out += "\\n";
    else if (ch == '"' && quote)
      out += "\\\"";
    else
      out += ch;
  }
}

void append_u64(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

}  // namespace

void append_double(std::string& out, double v) {
  if (std::isnan(v)) {
    out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  // As Go's FormatFloat(v, 'g', -1) spells it, which Prometheus's own
  // clients use: plain digits from 1e-4 up to 1e21, an exponent outside.
  const double a = std::fabs(v);
  const bool plain = v == 0 || (a >= 1e-4 && a < 1e21);
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, plain ? std::chars_format::fixed : std::chars_format::scientific);
  out.append(buf, r.ptr);
}

void TextWriter::family(std::string_view name, Type type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  append_escaped(out_, help, false);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type_name(type);
  out_ += '\n';
}

void TextWriter::series(std::string_view name, std::string_view suffix, Labels labels, const Label* extra) {
  out_ += name;
  out_ += suffix;
  if (labels.size() == 0 && !extra) {
    out_ += ' ';
    return;
  }
  out_ += '{';
  bool first = true;
  auto one = [&](const Label& l) {
    if (!first) out_ += ',';
    first = false;
    out_ += l.name;
    out_ += "=\"";
    append_escaped(out_, l.value, true);
    out_ += '"';
  };
  for (const Label& l : labels) one(l);
  if (extra) one(*extra);
  out_ += "} ";
}

void TextWriter::sample(std::string_view name, Labels labels, uint64_t v) {
  series(name, {}, labels, nullptr);
  append_u64(out_, v);
  out_ += '\n';
}

void TextWriter::sample(std::string_view name, Labels labels, int64_t v) {
  series(name, {}, labels, nullptr);
  if (v < 0) {
    out_ += '-';
    append_u64(out_, static_cast<uint64_t>(-(v + 1)) + 1);
  } else {
    append_u64(out_, static_cast<uint64_t>(v));
  }
  out_ += '\n';
}

void TextWriter::sample(std::string_view name, Labels labels, double v) {
  series(name, {}, labels, nullptr);
  append_double(out_, v);
  out_ += '\n';
}

void TextWriter::histogram(std::string_view name, Labels labels, const Histogram& h) {
  const Histogram::Reading r = h.read();
  const auto& bounds = h.bounds_ns();
  std::string le;
  for (size_t i = 0; i <= bounds.size(); ++i) {
    le.clear();
    append_double(le, i < bounds.size() ? static_cast<double>(bounds[i]) / 1e9 : INFINITY);
    const Label bucket{"le", le};
    series(name, "_bucket", labels, &bucket);
    append_u64(out_, r.cumulative[i]);
    out_ += '\n';
  }
  series(name, "_sum", labels, nullptr);
  append_double(out_, static_cast<double>(r.sum_ns) / 1e9);
  out_ += '\n';
  series(name, "_count", labels, nullptr);
  append_u64(out_, r.count);
  out_ += '\n';
}

}  // namespace oddsrelay::metrics
