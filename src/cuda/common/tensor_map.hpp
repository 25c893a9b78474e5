// cuTensorMapEncodeTiled without linking libcuda: the driver function of the CUDA 12.0 ABI, looked
// up once through the runtime's versioned entry point (the unversioned lookup is deprecated since
// CUDA 12.5 and may hand out a newer ABI). Shared by every kernel that builds a TMA descriptor.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <string>

#include "nvfp4/error.hpp"

namespace nvfp4::cuda {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                 const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The encoder, or a one-line reason when the driver does not offer it (a failed lookup leaves no
// sticky runtime error behind).
inline Result<EncodeTiled> tensor_map_encoder() {
  static const EncodeTiled encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
      cudaGetLastError();
      fn = nullptr;
    }
    return reinterpret_cast<EncodeTiled>(fn);
  }();
  if (!encode) return cuda_error("cuTensorMapEncodeTiled (CUDA 12.0 ABI) is not available from the driver");
  return encode;
}

// A tensor of `rank` dimensions (innermost first; strides in bytes, from the second) in boxes of
// `box` elements with the 128-byte swizzle (every TMA box of these kernels): past the tensor a box
// load reads zeros and a box store writes nothing. `who` and `what` name the caller and the tensor
// in the one-line error.
inline Result<CUtensorMap> tensor_map_sw128(CUtensorMapDataType type, const void* base, cuuint32_t rank, const cuuint64_t* dims,
                                            const cuuint64_t* strides, const cuuint32_t* box, CUtensorMapL2promotion promotion,
                                            const std::string& who, const std::string& what) {
  NVFP4_ASSIGN_OR_RETURN(const EncodeTiled encode, tensor_map_encoder());
  CUtensorMap map{};
  const cuuint32_t elem[5] = {1, 1, 1, 1, 1};  // rank <= 5 (TMA's most)
  const CUresult r = encode(&map, type, rank, const_cast<void*>(base), dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return cuda_error(who + "cuTensorMapEncodeTiled failed for " + what + " (code " + std::to_string(r) + ")");
  return map;
}

// A 2-D tensor of `rows` rows of `cols` elements of `type`, `pitch` bytes apart, in boxes of
// box_cols x box_rows (tensor_map_sw128).
inline Result<CUtensorMap> tensor_map_2d_sw128(CUtensorMapDataType type, const void* base, uint64_t cols, uint64_t rows, uint64_t pitch,
                                               uint32_t box_cols, uint32_t box_rows, CUtensorMapL2promotion promotion,
                                               const std::string& who, const std::string& what) {
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {pitch};
  const cuuint32_t box[2] = {box_cols, box_rows};
  return tensor_map_sw128(type, base, 2, dims, strides, box, promotion, who, what);
}

// A 2-D array [rows][cols] seen as [planes][rows][plane_cols]: plane p is columns p * plane_cols ..
// (p + 1) * plane_cols - 1 (a stride of plane_cols elements of `elem_bytes`), so that one box of
// box_planes planes x box_rows rows x plane_cols columns lands as box_planes consecutive 2-D boxes,
// each with the 128-byte swizzle of tensor_map_2d_sw128's (plane_cols * elem_bytes <= 128, and a
// plane's box_rows * 128 bytes a multiple of the swizzle's 1024-byte period). Planes past `planes`
// are filled with zeros and still counted in the box's bytes.
inline Result<CUtensorMap> tensor_map_planes_sw128(CUtensorMapDataType type, const void* base, uint64_t plane_cols, uint64_t rows,
                                                   uint64_t planes, uint64_t pitch, uint64_t elem_bytes, uint32_t box_rows,
                                                   uint32_t box_planes, CUtensorMapL2promotion promotion, const std::string& who,
                                                   const std::string& what) {
  const cuuint64_t dims[3] = {plane_cols, rows, planes};
  const cuuint64_t strides[2] = {pitch, plane_cols * elem_bytes};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(plane_cols), box_rows, box_planes};
  return tensor_map_sw128(type, base, 3, dims, strides, box, promotion, who, what);
}

}  // namespace nvfp4::cuda
