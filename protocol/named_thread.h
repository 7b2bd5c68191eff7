// The node's long-lived threads start here, each named for its stage of
// the data path (docs/architecture.md "Threads and who owns what"), so
// that `top -H` and `perf report --sort comm` say which stage a core went
// to. Linux keeps the first 15 characters of a name.
#pragma once

#include <pthread.h>

#include <string>
#include <thread>
#include <utility>

namespace oddsrelay {

template <class F>
std::thread named_thread(std::string name, F&& body) {
  return std::thread([name = std::move(name), body = std::forward<F>(body)]() mutable {
    pthread_setname_np(pthread_self(), name.c_str());
    body();
  });
}

}  // namespace oddsrelay
