// Host side of the sm90 path, shared by the library entry points (runtime.cu, device_api.cu) and
// the benchmark: weights prepacked and uploaded once, activation workspaces sized for a tile
// configuration.
#pragma once
#include <cstdlib>
#include <vector>

#include "../common/check.cuh"
#include "../common/kernels.hpp"
#include "../common/operands.hpp"
#include "sm90_layout.hpp"

namespace nvfp4::cuda::sm90 {

// A weight prepacked for the kernel on the host: the weight blocks (sm90_layout.hpp). Built once;
// uploaded as often as copies are needed.
struct HostWeights {
  std::vector<uint8_t> blocks;
  int64_t n = 0, chunks = 0;
  // From an operand prepare_operand made: lo_first rows at pitch chunks * 32, swizzled scales.
  static HostWeights from_operand(const std::vector<uint8_t>& data, const std::vector<uint8_t>& sf, int64_t n, int64_t chunks) {
    HostWeights h;
    h.n = n;
    h.chunks = chunks;
    prepack_weight_blocks(data.data(), sf.data(), n, chunks * 32, chunks, h.blocks);
    return h;
  }
  static HostWeights of(const Tensor& w) {
    const int64_t k64 = roundup(w.geom.cols16, 64);
    std::vector<uint8_t> data, sf;
    prepare_operand(w, k64 / 2, data, sf);
    return from_operand(data, sf, w.geom.rows, k64 / 64);
  }
};

// Bytes of the prepacked blocks of an n x (chunks * 64) weight.
inline size_t weight_block_bytes(int64_t n, int64_t chunks) {
  return static_cast<size_t>((n + kRowsWG - 1) / kRowsWG * chunks * kWBlockBytes);
}

struct DeviceWeights {
  DeviceBuffer<uint8_t> blocks;
  int64_t n = 0, chunks = 0;
  Status upload(const HostWeights& h) {
    n = h.n;
    chunks = h.chunks;
    return cuda::upload(blocks, h.blocks.data(), h.blocks.size());
  }
  Status upload(const Tensor& w) { return upload(HostWeights::of(w)); }
};

// The configuration for m x n on this GPU (the launcher's choice, or NVFP4_SM90_CONFIG's).
inline Config pick_config(int64_t m, int64_t n, int sm_count) {
  Config c;
  sm90_pick_config(m, n, sm_count, c.bm, c.rw, c.tw, c.nh, c.ks);
  return c;
}

// The activation workspaces of one GEMM (the pre-pass writes them, the kernel reads them), wherever
// they are allocated: A' [mp][chunks * 64] fp16, token records [mp][chunks], tile records
// [chunks][mp / bm], thread-group records [mp / bm][chunks][4]; mp = M rounded up to the CTA's
// token tile.
struct ActivationSpace {
  int64_t m = 0, chunks = 0;
  Config cfg;
  int64_t padded_rows() const { return (m + cfg.tile_tokens() - 1) / cfg.tile_tokens() * cfg.tile_tokens(); }
  int64_t blocks() const { return padded_rows() / cfg.bm; }
  size_t a16_count() const { return static_cast<size_t>(padded_rows() * chunks * 64); }
  size_t trec_count() const { return static_cast<size_t>(padded_rows() * chunks); }
  size_t atile_count() const { return static_cast<size_t>(blocks() * chunks); }
  size_t agroup_count() const { return static_cast<size_t>(blocks() * chunks * 4); }
  // The pre-pass's output side (its input side is the caller's).
  void set_outputs(Sm90Prep& p, uint16_t* a16, TokenRec* trec, TileRec* atile, TileRec* agroup) const {
    p.m = m;
    p.chunks = chunks;
    p.mp = padded_rows();
    p.bm = cfg.bm;
    p.a16 = a16;
    p.trec = trec;
    p.atile = atile;
    p.agroup = agroup;
  }
  // The GEMM over these workspaces and weight w (epilogue fields are the caller's).
  Sm90Gemm gemm_args(const DeviceWeights& w, const uint16_t* a16, const TokenRec* trec, const TileRec* atile,
                     const TileRec* agroup) const {
    Sm90Gemm g;
    g.a16 = a16;
    g.trec = trec;
    g.atile = atile;
    g.agroup = agroup;
    g.wblk = w.blocks.get();
    g.m = m;
    g.n = w.n;
    g.chunks = chunks;
    g.mp = padded_rows();
    g.bm = cfg.bm;
    g.rw = cfg.rw;
    g.tw = cfg.tw;
    g.nh = cfg.nh;
    g.ks = cfg.ks;
    return g;
  }
};

struct DeviceActivations {
  DeviceBuffer<uint16_t> a16;
  DeviceBuffer<TokenRec> trec;
  DeviceBuffer<TileRec> atile, agroup;
  ActivationSpace space;
  Status alloc(int64_t m, int64_t chunks, const Config& cfg) {
    space = ActivationSpace{m, chunks, cfg};
    NVFP4_TRY(a16.alloc(space.a16_count()));
    NVFP4_TRY(trec.alloc(space.trec_count()));
    NVFP4_TRY(atile.alloc(space.atile_count()));
    return agroup.alloc(space.agroup_count());
  }
  Sm90Gemm gemm_args(const DeviceWeights& w) const {
    return space.gemm_args(w, a16.get(), trec.get(), atile.get(), agroup.get());
  }
  // The pre-pass's output side into these buffers (its input side is the caller's).
  void set_outputs(Sm90Prep& p) const { space.set_outputs(p, a16.get(), trec.get(), atile.get(), agroup.get()); }
  Sm90Prep prep_args() const {
    Sm90Prep p;
    set_outputs(p);
    return p;
  }
};

}  // namespace nvfp4::cuda::sm90
