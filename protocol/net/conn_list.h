// A loop's lists of connections (every connection, for the sweep; a
// protocol module's subscribers): vectors whose members record their
// position, so adding and removing are O(1) and walking is a scan of
// pointers. Removing moves the last member into the gap.
#pragma once

#include <cstdint>
#include <vector>

namespace oddsrelay::net {

template <class T>
void list_add(std::vector<T*>& v, T* c, uint32_t T::*slot) {
  c->*slot = static_cast<uint32_t>(v.size());
  v.push_back(c);
}

template <class T>
void list_remove(std::vector<T*>& v, T* c, uint32_t T::*slot) {
  const uint32_t i = c->*slot;
  if (i == UINT32_MAX) return;
  v[i] = v.back();
  v[i]->*slot = i;
  v.pop_back();
  c->*slot = UINT32_MAX;
}

}  // namespace oddsrelay::net
