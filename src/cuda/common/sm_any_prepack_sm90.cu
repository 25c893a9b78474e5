// Operand preparation for the sm90 path on the device, from NVFP4 tensors already in GPU memory
// (a ComfyUI checkpoint's weight, a comfy-kitchen activation), so they never visit the host:
//  - the weight prepack: exactly the bytes of sm90::prepack_weight_blocks
//    (src/cuda/sm90/sm90_layout.hpp), which runs on the host, from the same shared functions;
//  - packed A into the layout the sm90 pre-pass reads (lo_first rows at pitch K64/2, zero padded).
// Plain byte shuffles and the records' integer/float arithmetic: any GPU.
#include <cmath>

#include "check.cuh"
#include "kernels.hpp"
#include "swizzle.cuh"
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

// One thread per code word: word j of consumer thread th of block (chunk c, 64-row block b), as
// prepack_weight_blocks writes it.
__global__ void prepack_codes(const uint8_t* src, int64_t pitch, int64_t row_bytes, int64_t n, bool hi_first, int64_t nb,
                              int64_t words, uint8_t* out) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= words) return;
  const int64_t blk = idx / 512;  // 128 threads x 4 words per block
  const int rem = static_cast<int>(idx % 512), th = rem / 4, j = rem % 4;
  const int64_t c = blk / nb, b = blk % nb;
  auto code = [&](int r, int k) -> uint8_t {
    const uint8_t byte = lo_first_byte(src, pitch, row_bytes, n, hi_first, b * sm90::kRowsWG + r, c * 32 + k / 2);
    return static_cast<uint8_t>((byte >> (4 * (k % 2))) & 0xF);
  };
  *reinterpret_cast<uint32_t*>(out + blk * sm90::kWBlockBytes + sm90::kWBlockCodes + th * 16 + 4 * j) =
      sm90::block_code_word(th, j, code);
}

// One thread per block: its 64 rows' scale multipliers and the tile record, as prepack_weight_blocks.
__global__ void prepack_scales(const uint8_t* sf, int64_t chunks, int64_t nb, uint8_t* out) {
  const int64_t blk = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (blk >= chunks * nb) return;
  const int64_t c = blk / nb, b = blk % nb;
  uint32_t sf4[sm90::kRowsWG];
  for (int r = 0; r < sm90::kRowsWG; ++r) {
    const int64_t row = b * sm90::kRowsWG + r;
    const uint8_t* q = sf + swizzled_offset(row, 4 * c, 4 * chunks);
    sf4[r] = uint32_t(q[0]) | (uint32_t(q[1]) << 8) | (uint32_t(q[2]) << 16) | (uint32_t(q[3]) << 24);
    sm90::store_row_multipliers(out + blk * sm90::kWBlockBytes, r, sf4[r]);
  }
  const sm90::TileRec rec = sm90::weight_tile_rec(sf4, sm90::kRowsWG);
  const uint4* v = reinterpret_cast<const uint4*>(&rec);
  uint4* d = reinterpret_cast<uint4*>(out + blk * sm90::kWBlockBytes + sm90::kWBlockTile);
  for (int i = 0; i < 3; ++i) d[i] = v[i];
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

Status launch_sm90_prepack_weight(const Sm90WeightSource& s, uint8_t* blocks, cudaStream_t stream) {
  if (s.n <= 0 || s.chunks <= 0 || s.row_bytes <= 0 || s.pitch < s.row_bytes || s.row_bytes > s.chunks * 32)
    return invalid_argument("sm90 weight prepack: bad geometry");
  const int64_t nb = (s.n + sm90::kRowsWG - 1) / sm90::kRowsWG, words = nb * s.chunks * 512;
  if ((words + kBlock - 1) / kBlock > 0x7FFFFFFF) return invalid_argument("sm90 weight prepack: weight too large for one launch");
  prepack_codes<<<blocks_for(words), kBlock, 0, stream>>>(s.data, s.pitch, s.row_bytes, s.n, s.hi_first, nb, words, blocks);
  NVFP4_CUDA_LAUNCH_TRY("sm90 prepack_codes");
  prepack_scales<<<blocks_for(nb * s.chunks), kBlock, 0, stream>>>(s.sf, s.chunks, nb, blocks);
  NVFP4_CUDA_LAUNCH_TRY("sm90 prepack_scales");
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
