// Random NVFP4 tensors for the property and GPU tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "nvfp4/format.hpp"

namespace nvfp4::testing {

// Random NVFP4 tensor with the given scale byte range; some rows and groups all zero.
inline Tensor random_tensor(int64_t rows, int64_t cols, std::mt19937& rng, int sf_lo, int sf_hi, NibbleOrder o) {
  const Geometry g = Geometry::of(rows, cols);
  std::vector<uint8_t> data(g.data_bytes());
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (int64_t r = 0; r < g.rows16; ++r)
    for (int64_t k = cols; k < g.cols16; ++k) {  // zero padding past the logical columns
      uint8_t& b = data[r * g.row_bytes() + k / 2];
      b &= ((k % 2 == 0) == (o == NibbleOrder::kHiFirst)) ? 0x0F : 0xF0;
    }
  if (rows > 3) std::fill(data.begin() + 3 * g.row_bytes(), data.begin() + 4 * g.row_bytes(), 0);  // a zero row
  std::vector<uint8_t> sf(g.rows16 * g.sf_cols);
  std::uniform_int_distribution<int> d(sf_lo, sf_hi);
  for (auto& b : sf) b = static_cast<uint8_t>(d(rng));
  auto t = Tensor::make(rows, cols, o, ScaleLayout::kLinear, 1.0f, std::move(data), std::move(sf));
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return t.value();
}

}  // namespace nvfp4::testing
