// Host side of the sm90 path, shared by the library entry points (runtime.cu) and the benchmark:
// weights prepacked and uploaded once, activation workspaces sized for a tile height.
#pragma once
#include <vector>

#include "../common/check.cuh"
#include "../common/kernels.hpp"
#include "../common/operands.hpp"
#include "sm90_layout.hpp"

namespace nvfp4::cuda::sm90 {

// A weight prepacked for the kernel on the host: codes in fragment order, the swizzled scales and
// the per-row check records. Built once; uploaded as often as copies are needed.
struct HostWeights {
  std::vector<uint8_t> codes, sf;
  std::vector<WRec> recs;
  int64_t n = 0, chunks = 0;
  // From an operand prepare_operand made: lo_first rows at pitch chunks * 32, swizzled scales.
  static HostWeights from_operand(const std::vector<uint8_t>& data, std::vector<uint8_t> sf, int64_t n, int64_t chunks) {
    HostWeights h;
    h.n = n;
    h.chunks = chunks;
    prepack_weight_codes(data.data(), n, chunks * 32, chunks, h.codes);
    prepack_weight_records(sf.data(), n, chunks, h.recs);
    h.sf = std::move(sf);
    return h;
  }
  static HostWeights of(const Tensor& w) {
    const int64_t k64 = roundup(w.geom.cols16, 64);
    std::vector<uint8_t> data, sf;
    prepare_operand(w, k64 / 2, data, sf);
    return from_operand(data, std::move(sf), w.geom.rows, k64 / 64);
  }
};

struct DeviceWeights {
  DeviceBuffer<uint8_t> wq, sfw;
  DeviceBuffer<WRec> wrec;
  int64_t n = 0, chunks = 0;
  Status upload(const HostWeights& h) {
    n = h.n;
    chunks = h.chunks;
    NVFP4_TRY(cuda::upload(wq, h.codes.data(), h.codes.size()));
    NVFP4_TRY(cuda::upload(wrec, h.recs.data(), h.recs.size()));
    return cuda::upload(sfw, h.sf.data(), h.sf.size());
  }
  Status upload(const Tensor& w) { return upload(HostWeights::of(w)); }
};

struct DeviceActivations {
  DeviceBuffer<uint16_t> a16;
  DeviceBuffer<TokenRec> trec;
  DeviceBuffer<GroupRec> grec;
  int64_t m = 0, chunks = 0;
  int bm = 0;
  Status alloc(int64_t m_, int64_t chunks_, int bm_) {
    m = m_;
    chunks = chunks_;
    bm = bm_;
    const int64_t mp = (m + bm - 1) / bm * bm;
    NVFP4_TRY(a16.alloc(static_cast<size_t>(mp * chunks * 64)));
    NVFP4_TRY(trec.alloc(static_cast<size_t>(mp * chunks)));
    return grec.alloc(static_cast<size_t>(mp / bm * chunks * 4));
  }
  Sm90Gemm gemm_args(const DeviceWeights& w) const {
    Sm90Gemm g;
    g.a16 = a16.get();
    g.trec = trec.get();
    g.grec = grec.get();
    g.wq = w.wq.get();
    g.sfw = w.sfw.get();
    g.wrec = w.wrec.get();
    g.m = m;
    g.n = w.n;
    g.chunks = chunks;
    g.bm = bm;
    return g;
  }
  Sm90Prep prep_args() const {
    Sm90Prep p;
    p.m = m;
    p.chunks = chunks;
    p.bm = bm;
    p.a16 = a16.get();
    p.trec = trec.get();
    p.grec = grec.get();
    return p;
  }
};

}  // namespace nvfp4::cuda::sm90
