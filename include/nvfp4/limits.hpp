// Bounds on sizes that come from input (files, command lines, API callers). Every size derived from
// input goes through these before anything is allocated or indexed: dimensions must be positive and
// sane, products must not overflow, and what a problem will hold in memory must fit the machine.
// Each check returns a one-line Status that names the offending size.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "nvfp4/error.hpp"

namespace nvfp4 {

// The largest single dimension accepted anywhere. The GPU kernels index rows and columns with 32-bit
// grid coordinates, and no real layer comes near it; anything larger is a typo or a corrupt header.
inline constexpr int64_t kMaxDim = (int64_t{1} << 31) - 1;

// A dimension taken from input: `what` names it in the message ("--rows", "shape[1] of 'x.npy'").
// Refuses negatives and values above kMaxDim; zero is refused unless allow_zero.
Status check_dim(int64_t v, std::string_view what, bool allow_zero = false);

// a * b (and the products of several factors) without signed overflow: factors must be >= 0; a
// product above INT64_MAX is an error naming `what`.
Result<int64_t> checked_mul(int64_t a, int64_t b, std::string_view what);
Result<int64_t> checked_product(std::initializer_list<int64_t> factors, std::string_view what);

// A comma list of dimensions from a command line ("R,C"): whole decimal integers, each through
// check_dim; `count` > 0 demands exactly that many.
Result<std::vector<int64_t>> parse_dims(std::string_view s, std::string_view what, size_t count = 0);
// A raw little-endian array file of `have` bytes must hold exactly prod(dims) * elem bytes.
Status check_raw_size(uint64_t have, const std::vector<int64_t>& dims, int64_t elem, std::string_view name);

// Memory this process may use: the physical memory (sysconf), or NVFP4_MEMORY_LIMIT (bytes; K/M/G
// suffixes allowed) when set and smaller, so tests and shared machines can lower the ceiling.
uint64_t memory_budget_bytes();
// NVFP4_MEMORY_LIMIT, when set, must be such a size: anything else ("10MB", "1.5G", "0") is a
// one-line kInvalidArgument naming the variable and the accepted forms, so that a typo cannot leave
// the ceiling silently at physical memory. check_memory() and every nvfp4 command check it first.
Status check_memory_limit_env();
// "23.4 GiB", "512 B": for messages.
std::string format_bytes(uint64_t bytes);
// Refuses `bytes` when it exceeds memory_budget_bytes(), with a one-line kUnsupported status naming
// the size ("<what> needs 5.8 PiB of memory; this machine has 23.4 GiB").
Status check_memory(uint64_t bytes, std::string_view what);

// A GEMM problem from input: activation [m][k] bf16, weight [n][k], both quantized to NVFP4, and
// `outputs` copies of the [m][n] fp32 + bf16 result held at once (reference, candidate, ...). Checks
// each dimension, every product, and the estimated footprint against the machine.
Status check_gemm_problem(int64_t m, int64_t n, int64_t k, int outputs, std::string_view what);
// The same checks of the dimensions and products, and the footprint in bytes, without comparing it
// with this machine's memory: for calls that hold the problem in GPU memory, not the host's.
Result<int64_t> gemm_problem_bytes(int64_t m, int64_t n, int64_t k, int outputs, std::string_view what);

}  // namespace nvfp4
