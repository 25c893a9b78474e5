// What a harness asserts beyond "no sanitizer report": a broken invariant aborts with its text,
// which libFuzzer records as a crash with the input that caused it.
#pragma once
#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(cond)                                                      \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                           \
    }                                                                         \
  } while (0)
