// What ComfyUI runs on GPUs without FP4 tensor cores (Hopper included) before every NVFP4 linear:
// the whole weight dequantized to bf16 with comfy-kitchen's CUDA recipe (docs/numerics.md §2.5),
// out = bf16_rn(fmul_ftz(fmul_ftz(s, sf), v)), then a bf16 GEMM. Here for the benchmark's
// "ComfyUI Hopper path" row; the CPU counterpart is dequantize(t, DequantRecipe::kComfyCuda).
#include "check.cuh"
#include "kernels.hpp"
#include "numerics.cuh"
#include "swizzle.cuh"

namespace nvfp4::cuda {

namespace {
constexpr int kThreads = 256;

// One thread per 16-element block: 8 packed bytes in, 16 bf16 (two 16-byte stores) out.
__global__ void __launch_bounds__(kThreads) sm_any_dequantize_comfy(const uint8_t* data, const uint8_t* scales, int64_t rows,
                                                                    int64_t cols, float s, const float* s_dev, bool hi_first,
                                                                    uint16_t* out) {
  const int64_t sf_cols = cols / 16, cp = (sf_cols + 3) / 4 * 4;
  const int64_t b = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  if (b >= rows * sf_cols) return;
  const int64_t r = b / sf_cols, c = b % sf_cols;
  const float scale = fmul_rn_ftz(s_dev ? *s_dev : s, e4m3_to_f32(scales[swizzled_offset(r, c, cp)] & 0x7F));
  const uint2 packed = *reinterpret_cast<const uint2*>(data + r * (cols / 2) + c * 8);
  const uint32_t w[2] = {packed.x, packed.y};
  uint32_t o[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const uint32_t byte = (w[i / 4] >> (8 * (i % 4))) & 0xFF;
    const uint32_t first = hi_first ? byte >> 4 : byte & 0xF, second = hi_first ? byte & 0xF : byte >> 4;
    o[i] = bf16_rn(fmul_rn_ftz(scale, e2m1_value(first))) | (static_cast<uint32_t>(bf16_rn(fmul_rn_ftz(scale, e2m1_value(second)))) << 16);
  }
  uint4* dst = reinterpret_cast<uint4*>(out + r * cols + c * 16);
  dst[0] = make_uint4(o[0], o[1], o[2], o[3]);
  dst[1] = make_uint4(o[4], o[5], o[6], o[7]);
}
}  // namespace

Status launch_dequantize_comfy(const uint8_t* data, const uint8_t* scales, int64_t rows, int64_t cols, float s, bool hi_first,
                               uint16_t* out, cudaStream_t stream, const float* s_dev) {
  if (rows <= 0 || cols <= 0 || cols % 16 != 0) return invalid_argument("dequantize_gpu: rows > 0 and cols a multiple of 16");
  const int64_t blocks = rows * (cols / 16);
  if (blocks >= (int64_t{1} << 40)) return invalid_argument("dequantize_gpu: tensor too large for one launch");
  sm_any_dequantize_comfy<<<static_cast<unsigned>((blocks + kThreads - 1) / kThreads), kThreads, 0, stream>>>(data, scales, rows, cols,
                                                                                                             s, s_dev, hi_first, out);
  NVFP4_CUDA_LAUNCH_TRY("sm_any_dequantize_comfy");
  return Status::ok();
}

}  // namespace nvfp4::cuda
