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

// The activation workspaces of one GEMM (the pre-pass writes them, the kernel reads them), wherever
// they are allocated: A' [mp][chunks * 64] fp16, token records [mp][chunks], group records
// [mp / bm][chunks][4], mp = M rounded up to the tile height.
struct ActivationSpace {
  int64_t m = 0, chunks = 0;
  int bm = 0;
  int64_t padded_rows() const { return (m + bm - 1) / bm * bm; }
  size_t a16_count() const { return static_cast<size_t>(padded_rows() * chunks * 64); }
  size_t trec_count() const { return static_cast<size_t>(padded_rows() * chunks); }
  size_t grec_count() const { return static_cast<size_t>(padded_rows() / bm * chunks * 4); }
  // The pre-pass's output side (its input side is the caller's).
  void set_outputs(Sm90Prep& p, uint16_t* a16, TokenRec* trec, GroupRec* grec) const {
    p.m = m;
    p.chunks = chunks;
    p.bm = bm;
    p.a16 = a16;
    p.trec = trec;
    p.grec = grec;
  }
  // The GEMM over these workspaces and weight w (epilogue fields are the caller's).
  Sm90Gemm gemm_args(const DeviceWeights& w, const uint16_t* a16, const TokenRec* trec, const GroupRec* grec) const {
    Sm90Gemm g;
    g.a16 = a16;
    g.trec = trec;
    g.grec = grec;
    g.wq = w.wq.get();
    g.sfw = w.sfw.get();
    g.wrec = w.wrec.get();
    g.m = m;
    g.n = w.n;
    g.chunks = chunks;
    g.bm = bm;
    return g;
  }
};

struct DeviceActivations {
  DeviceBuffer<uint16_t> a16;
  DeviceBuffer<TokenRec> trec;
  DeviceBuffer<GroupRec> grec;
  ActivationSpace space;
  Status alloc(int64_t m, int64_t chunks, int bm) {
    space = ActivationSpace{m, chunks, bm};
    NVFP4_TRY(a16.alloc(space.a16_count()));
    NVFP4_TRY(trec.alloc(space.trec_count()));
    return grec.alloc(space.grec_count());
  }
  Sm90Gemm gemm_args(const DeviceWeights& w) const { return space.gemm_args(w, a16.get(), trec.get(), grec.get()); }
  Sm90Prep prep_args() const {
    Sm90Prep p;
    space.set_outputs(p, a16.get(), trec.get(), grec.get());
    return p;
  }
};

}  // namespace nvfp4::cuda::sm90
