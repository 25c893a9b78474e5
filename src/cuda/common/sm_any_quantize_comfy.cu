// bf16 -> NVFP4 with recipe comfy-cuda (docs/numerics.md §2.1), the shipped comfy-kitchen kernel's
// instruction sequence. Loads are not the limit here, instruction issue is (a variant that skips
// the loads runs as long), so the per-element work is kept small: one thread per 16-element block
// (two 16-byte loads, one 8-byte store, the block's steps in common/comfy_block.cuh), row and
// column by a multiply-high instead of an integer division (common/fast_div.hpp).
// Built for every target (sm_90a, sm_120a, sm_121a): no arch-specific instruction is needed.
#include <cuda_runtime.h>

#include "../../common/fast_div.hpp"
#include "check.cuh"
#include "comfy_block.cuh"
#include "kernels.hpp"
#include "nvfp4/format.hpp"
#include "numerics.cuh"

namespace nvfp4::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int kBlock = 16;
static_assert(kThreads % 32 == 0 && kBlock == 16, "whole warps, 16-element blocks");

struct QuantParams {
  const uint16_t* x;   // [rows][cols] bf16
  uint8_t* data;       // [rows16][cols16/2] u8, hi_first or lo_first
  uint8_t* scales;     // swizzled [sf_rows_pad][sf_cols_pad] or linear [rows16][cols16/16]
  uint32_t rows, cols, sf_cols, sf_cols_pad;  // 32-bit: the launcher checks every size fits
  uint32_t blocks;     // rows16 * sf_cols
  detail::FastDiv div_sf_cols;
  float s;
  const float* s_dev;  // or the global scale in device memory (read here: the host never waits for it)
  bool swizzled, vec_ok;  // vec_ok: every row start is 16-byte aligned (cols % 8 == 0)
};

template <bool kHiFirst>
__global__ void __launch_bounds__(kThreads) sm_any_quantize_comfy(QuantParams p) {
  const uint32_t b = blockIdx.x * kThreads + threadIdx.x;  // 32-bit: the launcher checks the size
  if (b >= p.blocks) return;
  const uint32_t r = detail::fast_div(b, p.div_sf_cols), c = b - r * p.sf_cols;
  const uint32_t k0 = c * kBlock;

  uint32_t w[8];  // 16 bf16 patterns, element 2j in the low half of w[j]
  if (p.vec_ok && r < p.rows && k0 + kBlock <= p.cols) {
    const uint4* src = reinterpret_cast<const uint4*>(p.x + static_cast<int64_t>(r) * p.cols + k0);
    const uint4 v0 = __ldg(src), v1 = __ldg(src + 1);
    w[0] = v0.x; w[1] = v0.y; w[2] = v0.z; w[3] = v0.w; w[4] = v1.x; w[5] = v1.y; w[6] = v1.z; w[7] = v1.w;
  } else {  // padded edge or unaligned rows: zeros past the data, as F.pad gives the reference
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const uint32_t k = k0 + 2 * j;
      const uint32_t lo = (r < p.rows && k < p.cols) ? p.x[static_cast<int64_t>(r) * p.cols + k] : 0u;
      const uint32_t hi = (r < p.rows && k + 1 < p.cols) ? p.x[static_cast<int64_t>(r) * p.cols + k + 1] : 0u;
      w[j] = lo | (hi << 16);
    }
  }
  uint32_t packed[2] = {0, 0};
  const uint8_t sf = comfy_quantize_block<kHiFirst>(w, p.s_dev ? *p.s_dev : p.s, packed);
  reinterpret_cast<uint2*>(p.data)[b] = make_uint2(packed[0], packed[1]);  // row pitch cols16/2 = 8 B per block
  const uint32_t off = p.swizzled ? ((r >> 7) * (p.sf_cols_pad >> 2) + (c >> 2)) * 512 + (r & 31) * 16 +
                                        ((r & 127) >> 5) * 4 + (c & 3)
                                  : r * p.sf_cols + c;
  p.scales[off] = sf;
}

}  // namespace

Status launch_quantize_comfy(const uint16_t* x, int64_t rows, int64_t cols, float s, uint8_t* data,
                             uint8_t* scales, bool hi_first, bool swizzled, cudaStream_t stream, const float* s_dev) {
  const int64_t rows16 = (rows + 15) / 16 * 16, sf_cols = (cols + 15) / 16, sf_cols_pad = (sf_cols + 3) / 4 * 4;
  const int64_t blocks = rows16 * sf_cols;
  // Every index the kernel forms (blocks, scale offsets, columns) must fit 31 bits.
  if (blocks + kThreads >= (int64_t{1} << 31) || roundup(rows16, 128) * sf_cols_pad >= (int64_t{1} << 31) ||
      cols >= (int64_t{1} << 31))
    return invalid_argument("quantize_gpu: [" + std::to_string(rows) + ", " + std::to_string(cols) +
                            "] is too large for one launch (2^31 blocks or scale bytes)");
  QuantParams p;
  p.x = x;
  p.data = data;
  p.scales = scales;
  p.rows = static_cast<uint32_t>(rows);
  p.cols = static_cast<uint32_t>(cols);
  p.sf_cols = static_cast<uint32_t>(sf_cols);
  p.sf_cols_pad = static_cast<uint32_t>(sf_cols_pad);
  p.blocks = static_cast<uint32_t>(blocks);
  p.s = s;
  p.s_dev = s_dev;
  p.swizzled = swizzled;
  p.vec_ok = cols % 8 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  p.div_sf_cols = detail::make_fast_div(p.sf_cols);
  const unsigned grid = static_cast<unsigned>((p.blocks + kThreads - 1) / kThreads);
  if (hi_first) sm_any_quantize_comfy<true><<<grid, kThreads, 0, stream>>>(p);
  else sm_any_quantize_comfy<false><<<grid, kThreads, 0, stream>>>(p);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_quantize_comfy");
  return Status::ok();
}

}  // namespace nvfp4::cuda
