// A minimal fork-join parallel loop over [0, n) in contiguous chunks (no global pool: the
// library's heavy calls are coarse, so one spawn per call costs microseconds against seconds).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace nvfp4::detail {

inline int default_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

// fn(begin, end, worker) is called on disjoint ranges covering [0, n); work is handed out in
// chunks of `grain` from a shared counter so uneven rows still balance.
template <typename Fn>
void parallel_for(int64_t n, int64_t grain, int threads, Fn&& fn) {
  if (n <= 0) return;
  if (threads <= 0) threads = default_threads();
  grain = std::max<int64_t>(grain, 1);
  const int64_t chunks = (n + grain - 1) / grain;
  threads = static_cast<int>(std::min<int64_t>(threads, chunks));
  if (threads <= 1) {
    fn(int64_t{0}, n, 0);
    return;
  }
  std::atomic<int64_t> next{0};
  // An exception from fn (std::bad_alloc, say) must reach the caller, where the library turns it
  // into a status: escaping a thread's function, or leaving this one before the joins, it would
  // call std::terminate. The first one is kept, the chunks left are abandoned, and it is rethrown
  // once every thread has been joined.
  std::exception_ptr error;
  std::mutex error_mu;
  auto worker = [&](int w) {
    try {
      for (;;) {
        const int64_t c = next.fetch_add(1);
        if (c >= chunks) break;
        fn(c * grain, std::min(n, (c + 1) * grain), w);
      }
    } catch (...) {
      next.store(chunks);
      const std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  // Threads are a request, not a need: where the system refuses one (process or address-space
  // limits), the ones already running and this thread share the chunks left, and every started
  // thread is still joined (a joinable std::thread's destructor would call std::terminate).
  try {
    pool.reserve(threads - 1);
    for (int w = 1; w < threads; ++w) pool.emplace_back(worker, w);
  } catch (const std::exception&) {
  }
  worker(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace nvfp4::detail
