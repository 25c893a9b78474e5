// Operand preparation for the sm90 path on the device, from NVFP4 tensors already in GPU memory
// (a ComfyUI checkpoint's weight, a comfy-kitchen activation), so they never visit the host:
//  - the weight prepack: exactly the bytes of sm90::prepack_weight_codes and
//    sm90::prepack_weight_records (src/cuda/sm90/sm90_layout.hpp), which run on the host;
//  - packed A into the layout the sm90 pre-pass reads (lo_first rows at pitch K64/2, zero padded).
// Plain byte shuffles and the records' integer/float arithmetic: any GPU.
#include <cmath>

#include "check.cuh"
#include "kernels.hpp"
#include "../../model/hopper_exact.hpp"
#include "../sm90/sm90_layout.hpp"

namespace nvfp4::cuda {

namespace {

constexpr int kBlock = 256;

// Byte b of row r of a packed tensor (rows < n and bytes < row_bytes exist, the rest is the zero
// padding prepare_operand writes), in lo_first order.
__device__ __forceinline__ uint8_t lo_first_byte(const uint8_t* src, int64_t pitch, int64_t row_bytes, int64_t n, bool hi_first,
                                                 int64_t r, int64_t b) {
  if (r >= n || b >= row_bytes) return 0;
  const uint8_t v = src[r * pitch + b];
  return hi_first ? static_cast<uint8_t>((v << 4) | (v >> 4)) : v;
}

// One thread per output word: word j of consumer thread th of (n tile, chunk), as prepack_weight_codes.
__global__ void prepack_codes(const uint8_t* src, int64_t pitch, int64_t row_bytes, int64_t n, bool hi_first, int64_t chunks,
                              int64_t words, uint32_t* out) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= words) return;
  const int64_t tile = idx / 1024;  // kWCodeBytes / 4 words per (n tile, chunk)
  const int rem = static_cast<int>(idx % 1024), th = rem / 4, j = rem % 4;
  const int64_t nt = tile / chunks, c = tile % chunks;
  const int h = th / 128, w = (th % 128) / 32, g = (th % 32) / 4, t = th % 4;
  const int64_t r0 = nt * sm90::kTileN + 64 * h + 16 * w + g, r1 = r0 + 8;
  const int64_t byte = c * 32 + 8 * j + t;
  const uint32_t b0 = lo_first_byte(src, pitch, row_bytes, n, hi_first, r0, byte);
  const uint32_t b1 = lo_first_byte(src, pitch, row_bytes, n, hi_first, r1, byte);
  const uint32_t b2 = lo_first_byte(src, pitch, row_bytes, n, hi_first, r0, byte + 4);
  const uint32_t b3 = lo_first_byte(src, pitch, row_bytes, n, hi_first, r1, byte + 4);
  out[idx] = b0 | (b1 << 8) | (b2 << 16) | (b3 << 24);
}

// sm90::f16_bits_up on the device: the same double arithmetic, so the same bits.
__device__ uint16_t f16_bits_up_dev(float v) {
  if (!(v <= 65504.0f)) return 0x7C00;
  if (v == 0.0f) return 0;
  int e = 0;
  const double fr = frexp(static_cast<double>(v), &e);
  if (e - 1 < -14) return static_cast<uint16_t>(ceil(ldexp(static_cast<double>(v), 24)));
  const double mant = ceil((fr * 2.0 - 1.0) * 1024.0);
  if (mant >= 1024.0) return static_cast<uint16_t>((e - 1 + 1 + 15) << 10);
  return static_cast<uint16_t>(((e - 1 + 15) << 10) | static_cast<int>(mant));
}

// One thread per (n tile, chunk, row), as prepack_weight_records.
__global__ void prepack_records(const uint8_t* sf, int64_t chunks, int64_t count, sm90::WRec* out) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= count) return;
  const int r = static_cast<int>(idx % sm90::kTileN);
  const int64_t tile = idx / sm90::kTileN;  // nt * chunks + c
  const uint8_t* p = sf + tile * sm90::kWScaleBytes + sm90::scale_offset_in_tile(r);
  const uint32_t sw = uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
  const hopper::RowChunk rc = hopper::weight_chunk(sw);
  sm90::WRec w{};
  for (int g = 0; g < 4; ++g) w.mag[g] = f16_bits_up_dev(rc.mag[g]);
  w.lo = static_cast<int16_t>(rc.lo);
  w.hi = static_cast<int16_t>(rc.hi);
  w.nan = rc.nan;
  out[idx] = w;
}

// One thread per output byte: dst [m][lda] lo_first from src [m][pitch] (row_bytes valid bytes).
__global__ void pack_rows(const uint8_t* src, int64_t pitch, int64_t row_bytes, int64_t m, bool hi_first, int64_t lda,
                          uint8_t* dst) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= m * lda) return;
  dst[idx] = lo_first_byte(src, pitch, row_bytes, m, hi_first, idx / lda, idx % lda);
}

unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

}  // namespace

Status launch_sm90_prepack_weight(const Sm90WeightSource& s, uint8_t* wq, sm90::WRec* wrec, cudaStream_t stream) {
  if (s.n <= 0 || s.chunks <= 0 || s.row_bytes <= 0 || s.pitch < s.row_bytes || s.row_bytes > s.chunks * 32)
    return invalid_argument("sm90 weight prepack: bad geometry");
  const int64_t ntiles = (s.n + sm90::kTileN - 1) / sm90::kTileN;
  const int64_t words = ntiles * s.chunks * (sm90::kWCodeBytes / 4), recs = ntiles * s.chunks * sm90::kTileN;
  if (blocks_for(words) == 0 || (words + kBlock - 1) / kBlock > 0x7FFFFFFF)
    return invalid_argument("sm90 weight prepack: weight too large for one launch");
  prepack_codes<<<blocks_for(words), kBlock, 0, stream>>>(s.data, s.pitch, s.row_bytes, s.n, s.hi_first, s.chunks, words,
                                                          reinterpret_cast<uint32_t*>(wq));
  NVFP4_CUDA_LAUNCH_TRY("sm90 prepack_codes");
  prepack_records<<<blocks_for(recs), kBlock, 0, stream>>>(s.sf, s.chunks, recs, wrec);
  NVFP4_CUDA_LAUNCH_TRY("sm90 prepack_records");
  return Status::ok();
}

Status launch_pack_lo_first(const uint8_t* src, int64_t pitch, int64_t row_bytes, int64_t m, bool hi_first, int64_t lda,
                            uint8_t* dst, cudaStream_t stream) {
  if (m <= 0 || row_bytes <= 0 || pitch < row_bytes || lda < row_bytes) return invalid_argument("pack_lo_first: bad geometry");
  if ((m * lda + kBlock - 1) / kBlock > 0x7FFFFFFF) return invalid_argument("pack_lo_first: operand too large for one launch");
  pack_rows<<<blocks_for(m * lda), kBlock, 0, stream>>>(src, pitch, row_bytes, m, hi_first, lda, dst);
  NVFP4_CUDA_LAUNCH_TRY("pack_lo_first");
  return Status::ok();
}

}  // namespace nvfp4::cuda
