// cuBLASLt NVFP4 reference call (docs/numerics.md §6), loaded with dlopen so nothing links to it.
#include "nvfp4/cublaslt.hpp"

#if defined(NVFP4_WITH_CUDA)
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>

#include "cuda/common/check.cuh"
#include "cuda/common/operands.hpp"
#include "cuda/common/timing.hpp"
#endif

namespace nvfp4 {

Json CublasLtPlan::to_json() const {
  Json j = Json::object();
  j.set("index", index).set("status", status);
  j.set("ALGO_ID", algo_id).set("TILE_ID", tile_id).set("STAGES_ID", stages_id).set("SPLITK_NUM", splitk_num);
  j.set("REDUCTION_SCHEME", reduction_scheme).set("CTA_SWIZZLING", cta_swizzling).set("CUSTOM_OPTION", custom_option);
  j.set("INNER_SHAPE_ID", inner_shape_id).set("CLUSTER_SHAPE_ID", cluster_shape_id);
  j.set("workspace_bytes", workspace_bytes).set("waves_count", waves_count);
  j.set("contract", contract);
  return j;
}

Json CublasLtEnv::to_json() const {
  Json j = Json::object();
  j.set("library", library).set("cublaslt_version", cublaslt_version);
  j.set("cuda_runtime", runtime_version).set("driver", driver_version);
  j.set("device", device).set("compute_capability", std::to_string(cc_major) + "." + std::to_string(cc_minor));
  j.set("sm_count", sm_count);
  return j;
}

namespace {
// CUBLASLT_REDUCTION_SCHEME_* values (checked against cublasLt.h where it is available).
constexpr int64_t kSchemeCompute = 2, kSchemeOutput = 4;
MergeMode scheme_merge(int64_t scheme) {
  return scheme == kSchemeCompute ? MergeMode::kFp32 : scheme == kSchemeOutput ? MergeMode::kBf16Partials : MergeMode::kBf16Serial;
}
// The probe's text for a plan: the contract with the K grain (and partition rule) left open.
std::string plan_contract_text(int64_t splitk_num, int64_t scheme) {
  if (splitk_num <= 1) return "sequential";
  const std::string full = ReductionContract::split_k(2, 64, PartitionRule::kCublas, scheme_merge(scheme)).to_string();
  return "split_k:" + std::to_string(splitk_num) + ":?:" + full.substr(full.rfind(':') + 1);
}
}  // namespace

Result<ReductionContract> cublaslt_plan_contract(const CublasLtPlan& plan, int grain, PartitionRule rule) {
  if (plan.splitk_num <= 1) return ReductionContract::sequential();
  const std::string what = "cuBLASLt's plan (ALGO_ID " + std::to_string(plan.algo_id) + ", TILE_ID " +
                           std::to_string(plan.tile_id) + ") is " + plan_contract_text(plan.splitk_num, plan.reduction_scheme);
  if (plan.splitk_num > 64) return unsupported(what + ": more than 64 K slices is no contract this library runs");
  if (grain <= 0)
    return unsupported(what + ": its algo config does not state the K grain; pin it with `nvfp4 probe-cublaslt --compare` "
                              "and pass --contract cublaslt:grain=G");
  return ReductionContract::split_k(static_cast<int>(plan.splitk_num), grain, rule, scheme_merge(plan.reduction_scheme));
}

#if !defined(NVFP4_WITH_CUDA)

namespace {
const char* kNoCuda = "cuBLASLt path unavailable: this build of nvfp4 has no CUDA support";
}
Result<CublasLtEnv> cublaslt_env() { return unsupported(kNoCuda); }
Status cublaslt_nvfp4_supported(const CublasLtEnv&) { return unsupported(kNoCuda); }
Result<std::vector<CublasLtPlan>> cublaslt_probe(int64_t, int64_t, int64_t, const CublasLtPlanRequest&) { return unsupported(kNoCuda); }
Result<CublasLtOutput> cublaslt_gemm(const Tensor&, const Tensor&, float, const uint16_t*, const CublasLtPlanRequest&) {
  return unsupported(kNoCuda);
}
Result<Json> cublaslt_describe_call(int64_t, int64_t, int64_t, const CublasLtPlanRequest&) { return unsupported(kNoCuda); }
Result<double> cublaslt_bf16_linear_us(int64_t, int64_t, int64_t, int, int, int) { return unsupported(kNoCuda); }
Result<double> cublaslt_bf16_linear_us_with(int64_t, int64_t, int64_t, int, int, const std::function<Result<const void*>(int)>&) {
  return unsupported(kNoCuda);
}
Result<double> cublaslt_fp8_linear_us(int64_t, int64_t, int64_t, int, int, int) { return unsupported(kNoCuda); }

#else

namespace {

// The entry points we use, resolved from the shared library.
struct Api {
  void* lib = nullptr;
  std::string path;
  std::string error;
  size_t (*GetVersion)() = nullptr;
  cublasStatus_t (*Create)(cublasLtHandle_t*) = nullptr;
  cublasStatus_t (*Destroy)(cublasLtHandle_t) = nullptr;
  cublasStatus_t (*MatmulDescCreate)(cublasLtMatmulDesc_t*, cublasComputeType_t, cudaDataType_t) = nullptr;
  cublasStatus_t (*MatmulDescDestroy)(cublasLtMatmulDesc_t) = nullptr;
  cublasStatus_t (*MatmulDescSetAttribute)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*, size_t) = nullptr;
  cublasStatus_t (*MatmulDescGetAttribute)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, void*, size_t, size_t*) = nullptr;
  cublasStatus_t (*MatrixLayoutCreate)(cublasLtMatrixLayout_t*, cudaDataType, uint64_t, uint64_t, int64_t) = nullptr;
  cublasStatus_t (*MatrixLayoutDestroy)(cublasLtMatrixLayout_t) = nullptr;
  cublasStatus_t (*MatrixLayoutGetAttribute)(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, void*, size_t, size_t*) = nullptr;
  cublasStatus_t (*PreferenceCreate)(cublasLtMatmulPreference_t*) = nullptr;
  cublasStatus_t (*PreferenceDestroy)(cublasLtMatmulPreference_t) = nullptr;
  cublasStatus_t (*PreferenceSetAttribute)(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void*, size_t) = nullptr;
  cublasStatus_t (*AlgoGetHeuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                     cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                                     cublasLtMatmulHeuristicResult_t[], int*) = nullptr;
  cublasStatus_t (*AlgoConfigGetAttribute)(const cublasLtMatmulAlgo_t*, cublasLtMatmulAlgoConfigAttributes_t, void*, size_t, size_t*) = nullptr;
  cublasStatus_t (*AlgoConfigSetAttribute)(cublasLtMatmulAlgo_t*, cublasLtMatmulAlgoConfigAttributes_t, const void*, size_t) = nullptr;
  cublasStatus_t (*AlgoCheck)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t*,
                              cublasLtMatmulHeuristicResult_t*) = nullptr;
  cublasStatus_t (*Matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*, cublasLtMatrixLayout_t, const void*,
                           cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                           const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t) = nullptr;
};

const Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}) {
      a.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (a.lib) {
        a.path = name;
        break;
      }
    }
    if (!a.lib) {
      a.error = std::string("cannot load cuBLASLt (libcublasLt.so.13/.12): ") + dlerror();
      return;
    }
    bool ok = true;
    auto sym = [&](auto& fn, const char* n) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(a.lib, n));
      if (!fn) { ok = false; a.error = std::string("cuBLASLt lacks ") + n; }
    };
    sym(a.GetVersion, "cublasLtGetVersion");
    sym(a.Create, "cublasLtCreate");
    sym(a.Destroy, "cublasLtDestroy");
    sym(a.MatmulDescCreate, "cublasLtMatmulDescCreate");
    sym(a.MatmulDescDestroy, "cublasLtMatmulDescDestroy");
    sym(a.MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
    sym(a.MatmulDescGetAttribute, "cublasLtMatmulDescGetAttribute");
    sym(a.MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
    sym(a.MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy");
    sym(a.MatrixLayoutGetAttribute, "cublasLtMatrixLayoutGetAttribute");
    sym(a.PreferenceCreate, "cublasLtMatmulPreferenceCreate");
    sym(a.PreferenceDestroy, "cublasLtMatmulPreferenceDestroy");
    sym(a.PreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
    sym(a.AlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
    sym(a.AlgoConfigGetAttribute, "cublasLtMatmulAlgoConfigGetAttribute");
    sym(a.AlgoConfigSetAttribute, "cublasLtMatmulAlgoConfigSetAttribute");
    sym(a.AlgoCheck, "cublasLtMatmulAlgoCheck");
    sym(a.Matmul, "cublasLtMatmul");
    if (!ok) {
      dlclose(a.lib);
      a.lib = nullptr;
    }
  });
  return a;
}

std::string status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    default: return "cublasStatus " + std::to_string(static_cast<int>(s));
  }
}

#define NVFP4_LT_TRY(call)                                                                                  \
  do {                                                                                                       \
    const cublasStatus_t _s = (call);                                                                        \
    if (_s != CUBLAS_STATUS_SUCCESS) return ::nvfp4::Status(ErrorCode::kUnsupported, std::string(#call) + ": " + status_name(_s)); \
  } while (0)

// Descriptors of one call, destroyed on scope exit.
struct Call {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Call() {
    const Api& x = api();
    if (pref) x.PreferenceDestroy(pref);
    for (auto l : {a, b, c, d}) if (l) x.MatrixLayoutDestroy(l);
    if (desc) x.MatmulDescDestroy(desc);
  }
};

// comfy-kitchen's scaled_mm_nvfp4, docs/numerics.md §6: cuBLAS m = N (weight rows), n = M, k = K.
Status build_call(Call& call, int64_t M, int64_t N, int64_t K, const CublasLtPlanRequest& req, cudaDataType_t d_type,
                  const void* a_scales, const void* b_scales, const void* bias) {
  const Api& x = api();
  NVFP4_LT_TRY(x.MatmulDescCreate(&call.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  const cublasLtMatmulMatrixScale_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
  NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode));
  NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode));
  NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scales, sizeof a_scales));
  NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scales, sizeof b_scales));
  const cublasLtPointerMode_t pm = CUBLASLT_POINTER_MODE_DEVICE;
  NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm));
  const cublasLtEpilogue_t epi = req.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  if (req.bias) {
    const cudaDataType_t bt = CUDA_R_16BF;
    NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt));
    NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  }
  NVFP4_LT_TRY(x.MatrixLayoutCreate(&call.a, CUDA_R_4F_E2M1, K, N, K));   // weight [N][K]: K x N col-major
  NVFP4_LT_TRY(x.MatrixLayoutCreate(&call.b, CUDA_R_4F_E2M1, K, M, K));   // activation [M][K]
  NVFP4_LT_TRY(x.MatrixLayoutCreate(&call.c, d_type, N, M, N));           // C points to D
  NVFP4_LT_TRY(x.MatrixLayoutCreate(&call.d, d_type, N, M, N));
  NVFP4_LT_TRY(x.PreferenceCreate(&call.pref));
  const uint64_t ws = static_cast<uint64_t>(req.workspace_bytes);
  NVFP4_LT_TRY(x.PreferenceSetAttribute(call.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  if (req.forbid_splitk) {
    const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_NONE;
    NVFP4_LT_TRY(x.PreferenceSetAttribute(call.pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask));
  }
  return Status::ok();
}

template <typename T>
int64_t algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t a) {
  T v{};
  size_t written = 0;
  api().AlgoConfigGetAttribute(&algo, a, &v, sizeof v, &written);
  return static_cast<int64_t>(v);
}

CublasLtPlan read_plan(int index, const cublasLtMatmulHeuristicResult_t& r) {
  CublasLtPlan p;
  p.index = index;
  p.status = static_cast<int>(r.state);
  p.algo_id = algo_attr<int32_t>(r.algo, CUBLASLT_ALGO_CONFIG_ID);
  p.tile_id = algo_attr<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
  p.stages_id = algo_attr<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  p.splitk_num = algo_attr<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  p.reduction_scheme = algo_attr<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  p.cta_swizzling = algo_attr<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  p.custom_option = algo_attr<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  p.inner_shape_id = algo_attr<uint16_t>(r.algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  p.cluster_shape_id = algo_attr<uint16_t>(r.algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  p.workspace_bytes = static_cast<int64_t>(r.workspaceSize);
  p.waves_count = r.wavesCount;
  static_assert(kSchemeCompute == CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE && kSchemeOutput == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE,
                "reduction scheme values");
  p.contract = plan_contract_text(p.splitk_num, p.reduction_scheme);
  return p;
}

struct Handle {
  cublasLtHandle_t h = nullptr;
  ~Handle() { if (h) api().Destroy(h); }
};

// Runs the heuristic (and the forcing options) for a built call.
Result<std::vector<std::pair<cublasLtMatmulHeuristicResult_t, CublasLtPlan>>> plans_for(Handle& h, Call& call,
                                                                                        const CublasLtPlanRequest& req) {
  const Api& x = api();
  std::vector<cublasLtMatmulHeuristicResult_t> res(std::max(1, req.requested));
  int got = 0;
  const cublasStatus_t st = x.AlgoGetHeuristic(h.h, call.desc, call.a, call.b, call.c, call.d, call.pref,
                                               static_cast<int>(res.size()), res.data(), &got);
  if (st != CUBLAS_STATUS_SUCCESS || got == 0)
    return unsupported("cuBLASLt found no NVFP4 plan: cublasLtMatmulAlgoGetHeuristic returned " + status_name(st) +
                       " with " + std::to_string(got) + " results");
  std::vector<std::pair<cublasLtMatmulHeuristicResult_t, CublasLtPlan>> out;
  for (int i = 0; i < got; ++i) {
    cublasLtMatmulHeuristicResult_t r = res[i];
    if (req.force_splitk >= 1 || req.force_reduction_scheme >= 0) {
      if (req.force_splitk >= 1) {
        const uint32_t s = static_cast<uint32_t>(req.force_splitk);
        NVFP4_LT_TRY(x.AlgoConfigSetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &s, sizeof s));
      }
      if (req.force_reduction_scheme >= 0) {
        const uint32_t s = static_cast<uint32_t>(req.force_reduction_scheme);
        NVFP4_LT_TRY(x.AlgoConfigSetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &s, sizeof s));
      }
      cublasLtMatmulHeuristicResult_t checked{};
      const cublasStatus_t cs = x.AlgoCheck(h.h, call.desc, call.a, call.b, call.c, call.d, &r.algo, &checked);
      CublasLtPlan p = read_plan(i, r);
      p.status = static_cast<int>(cs);
      p.workspace_bytes = static_cast<int64_t>(checked.workspaceSize);
      out.emplace_back(r, p);
      continue;
    }
    out.emplace_back(r, read_plan(i, r));
  }
  return out;
}

}  // namespace

Result<CublasLtEnv> cublaslt_env() {
  const Api& x = api();
  if (!x.lib) return unsupported(x.error);
  CublasLtEnv env;
  env.library = x.path;
  env.cublaslt_version = static_cast<int64_t>(x.GetVersion());
  cudaRuntimeGetVersion(&env.runtime_version);
  cudaDriverGetVersion(&env.driver_version);
  int dev = 0;
  cudaDeviceProp p{};
  const cudaError_t e = cudaGetDeviceProperties(&p, dev);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return unsupported("cuBLASLt " + std::to_string(env.cublaslt_version) + " loaded, but there is no CUDA device: " +
                       cudaGetErrorString(e));
  }
  env.device = p.name;
  env.cc_major = p.major;
  env.cc_minor = p.minor;
  env.sm_count = p.multiProcessorCount;
  return env;
}

Status cublaslt_nvfp4_supported(const CublasLtEnv& env) {
  if (env.cc_major == 10 || env.cc_major == 12) return Status::ok();
  return unsupported("cuBLASLt NVFP4 needs compute capability 10.x or 12.x; " + env.device + " is " +
                     std::to_string(env.cc_major) + "." + std::to_string(env.cc_minor) + " (cuBLASLt " +
                     std::to_string(env.cublaslt_version) + ")");
}

Result<std::vector<CublasLtPlan>> cublaslt_probe(int64_t m, int64_t n, int64_t k, const CublasLtPlanRequest& req) {
  if (m <= 0 || n <= 0 || k <= 0 || k % 32 != 0)
    return invalid_argument("probe shape must be positive with K a multiple of 32");
  NVFP4_ASSIGN_OR_RETURN(CublasLtEnv env, cublaslt_env());
  Handle h;
  NVFP4_LT_TRY(api().Create(&h.h));
  Call call;
  // Scale and bias pointers only have to be non-null for the heuristic; nothing is read.
  static const uint8_t kDummy[16] = {};
  NVFP4_TRY(build_call(call, m, n, k, req, CUDA_R_16BF, kDummy, kDummy, kDummy));
  auto plans = plans_for(h, call, req);
  if (!plans.is_ok()) {
    Status why = cublaslt_nvfp4_supported(env);
    if (!why.is_ok()) return Status(why.code(), why.message() + "; " + plans.status().message());
    return plans.status();
  }
  std::vector<CublasLtPlan> out;
  for (auto& pr : plans.value()) out.push_back(pr.second);
  return out;
}

Result<CublasLtOutput> cublaslt_gemm(const Tensor& a, const Tensor& w, float alpha, const uint16_t* bias,
                                     const CublasLtPlanRequest& req_in) {
  NVFP4_TRY(a.check());
  NVFP4_TRY(w.check());
  if (a.geom.cols != w.geom.cols) return invalid_argument("K mismatch between activation and weight");
  NVFP4_ASSIGN_OR_RETURN(CublasLtEnv env, cublaslt_env());
  NVFP4_TRY(cublaslt_nvfp4_supported(env));
  CublasLtPlanRequest req = req_in;
  req.bias = bias != nullptr;
  req.requested = std::max(req.requested, req.heuristic_index + 1);
  const int64_t M = a.geom.rows16, N = w.geom.rows16, K = a.geom.cols16;
  // Both operands must share one nibble order; cuBLAS reads lo_first (ComfyUI passes hi_first
  // bytes for both, which gives the same products: docs/numerics.md §1).
  const Tensor al = a.with(NibbleOrder::kLoFirst, ScaleLayout::kSwizzled128x4);
  const Tensor wl = w.with(NibbleOrder::kLoFirst, ScaleLayout::kSwizzled128x4);
  cuda::DeviceBuffer<uint8_t> da, dw, dsa, dsw, ws;
  cuda::DeviceBuffer<float> dalpha, draw;
  cuda::DeviceBuffer<uint16_t> dout, dbias;
  NVFP4_TRY(da.alloc(al.data.size()));
  NVFP4_TRY(dw.alloc(wl.data.size()));
  NVFP4_TRY(dsa.alloc(al.scales.size()));
  NVFP4_TRY(dsw.alloc(wl.scales.size()));
  NVFP4_TRY(ws.alloc(static_cast<size_t>(req.workspace_bytes)));
  NVFP4_TRY(dalpha.alloc(3));
  NVFP4_TRY(draw.alloc(M * N));
  NVFP4_TRY(dout.alloc(M * N));
  NVFP4_CUDA_TRY(cudaMemcpy(da.get(), al.data.data(), al.data.size(), cudaMemcpyHostToDevice));
  NVFP4_CUDA_TRY(cudaMemcpy(dw.get(), wl.data.data(), wl.data.size(), cudaMemcpyHostToDevice));
  NVFP4_CUDA_TRY(cudaMemcpy(dsa.get(), al.scales.data(), al.scales.size(), cudaMemcpyHostToDevice));
  NVFP4_CUDA_TRY(cudaMemcpy(dsw.get(), wl.scales.data(), wl.scales.size(), cudaMemcpyHostToDevice));
  const float consts[3] = {alpha, 0.0f, 1.0f};  // alpha, beta, unit alpha for the raw run
  NVFP4_CUDA_TRY(cudaMemcpy(dalpha.get(), consts, sizeof consts, cudaMemcpyHostToDevice));
  if (bias) {
    NVFP4_TRY(dbias.alloc(w.geom.rows16));
    NVFP4_CUDA_TRY(cudaMemset(dbias.get(), 0, dbias.bytes()));
    NVFP4_CUDA_TRY(cudaMemcpy(dbias.get(), bias, w.geom.rows * 2, cudaMemcpyHostToDevice));
  }
  Handle h;
  NVFP4_LT_TRY(api().Create(&h.h));
  CublasLtOutput out;
  // bf16 output: the layer as ComfyUI runs it. cuBLAS A = weight (scales of w), B = activation.
  {
    Call call;
    NVFP4_TRY(build_call(call, M, N, K, req, CUDA_R_16BF, dsw.get(), dsa.get(), bias ? dbias.get() : nullptr));
    NVFP4_ASSIGN_OR_RETURN(auto plans, plans_for(h, call, req));
    if (req.heuristic_index >= static_cast<int>(plans.size()))
      return invalid_argument("heuristic index " + std::to_string(req.heuristic_index) + " out of range (" +
                              std::to_string(plans.size()) + " plans)");
    auto& [r, plan] = plans[req.heuristic_index];
    out.plan = plan;
    cudaEvent_t e0, e1;
    NVFP4_CUDA_TRY(cudaEventCreate(&e0));
    NVFP4_CUDA_TRY(cudaEventCreate(&e1));
    cudaEventRecord(e0);
    const cublasStatus_t st = api().Matmul(h.h, call.desc, dalpha.get(), dw.get(), call.a, da.get(), call.b, dalpha.get() + 1,
                                           dout.get(), call.c, dout.get(), call.d, &r.algo, ws.get(),
                                           static_cast<size_t>(req.workspace_bytes), nullptr);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    if (st != CUBLAS_STATUS_SUCCESS) return unsupported("cublasLtMatmul (bf16 D) returned " + status_name(st));
    NVFP4_CUDA_TRY(cudaDeviceSynchronize());
    out.kernel_ms = ms;
  }
  // fp32 output with alpha = 1: the raw block-scaled product, where cuBLASLt offers it.
  {
    Call call;
    CublasLtPlanRequest rr = req;
    rr.bias = false;
    NVFP4_TRY(build_call(call, M, N, K, rr, CUDA_R_32F, dsw.get(), dsa.get(), nullptr));
    auto plans = plans_for(h, call, rr);
    if (plans.is_ok() && !plans->empty()) {
      auto& r = plans.value()[std::min<size_t>(req.heuristic_index, plans->size() - 1)].first;
      const cublasStatus_t st = api().Matmul(h.h, call.desc, dalpha.get() + 2, dw.get(), call.a, da.get(), call.b,
                                             dalpha.get() + 1, draw.get(), call.c, draw.get(), call.d, &r.algo, ws.get(),
                                             static_cast<size_t>(req.workspace_bytes), nullptr);
      if (st == CUBLAS_STATUS_SUCCESS) {
        NVFP4_CUDA_TRY(cudaDeviceSynchronize());
        std::vector<float> full(M * N);
        NVFP4_CUDA_TRY(cudaMemcpy(full.data(), draw.get(), full.size() * 4, cudaMemcpyDeviceToHost));
        out.raw.resize(a.geom.rows * w.geom.rows);
        for (int64_t i = 0; i < a.geom.rows; ++i)
          for (int64_t j = 0; j < w.geom.rows; ++j) out.raw[i * w.geom.rows + j] = full[i * N + j];
      }
    }
  }
  std::vector<uint16_t> full(M * N);
  NVFP4_CUDA_TRY(cudaMemcpy(full.data(), dout.get(), full.size() * 2, cudaMemcpyDeviceToHost));
  out.out.resize(a.geom.rows * w.geom.rows);
  for (int64_t i = 0; i < a.geom.rows; ++i)
    for (int64_t j = 0; j < w.geom.rows; ++j) out.out[i * w.geom.rows + j] = full[i * N + j];  // D is N x M col-major
  return out;
}

namespace {
// Random data from a fixed LCG (constant data would flatter the tensor cores): bf16 in [-2, 2),
// or E4M3 bytes of magnitude 0.5..~1.9 (exponent 6..7).
std::vector<uint16_t> random_bf16(size_t n, uint32_t seed) {
  std::vector<uint16_t> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<uint16_t>(0x3C00u | ((seed >> 16) & 0x7Fu) | ((seed >> 8) & 0x8000u));
  }
  return v;
}

// One timed linear y[M][N] = x[M][K] w[N][K]^T through cuBLASLt (TRANSA = T, column-major D):
// dtype CUDA_R_16BF or CUDA_R_8F_E4M3 for both operands, bf16 D, fp32 compute. weight(i) gives run
// i's weight pointer (and may enqueue work that produces it, which is then timed too).
Result<double> lt_linear_us(int64_t m, int64_t n, int64_t k, int iters, int warmup, cudaDataType_t dtype, const void* x_dev,
                            const std::function<Result<const void*>(int)>& weight) {
  NVFP4_TRY(cublaslt_env().status());
  const Api& x = api();
  cuda::DeviceBuffer<uint16_t> dy;
  cuda::DeviceBuffer<uint8_t> ws;
  cuda::DeviceBuffer<float> scales;
  NVFP4_TRY(dy.alloc(static_cast<size_t>(m * n)));
  NVFP4_TRY(ws.alloc(32u << 20));
  Handle h;
  NVFP4_LT_TRY(x.Create(&h.h));
  Call call;
  NVFP4_LT_TRY(x.MatmulDescCreate(&call.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  cuda::DeviceBuffer<float> scale_b;
  if (dtype == CUDA_R_8F_E4M3) {  // per-tensor scales, as torch._scaled_mm passes them (each its own allocation: aligned)
    const float one = 1.0f;
    NVFP4_TRY(cuda::upload(scales, &one, 1));
    NVFP4_TRY(cuda::upload(scale_b, &one, 1));
    const void* sa = scales.get();
    const void* sb = scale_b.get();
    NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
    NVFP4_LT_TRY(x.MatmulDescSetAttribute(call.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
  }
  NVFP4_LT_TRY(x.MatrixLayoutCreate(&call.a, dtype, k, n, k));
  NVFP4_LT_TRY(x.MatrixLayoutCreate(&call.b, dtype, k, m, k));
  NVFP4_LT_TRY(x.MatrixLayoutCreate(&call.c, CUDA_R_16BF, n, m, n));
  NVFP4_LT_TRY(x.MatrixLayoutCreate(&call.d, CUDA_R_16BF, n, m, n));
  NVFP4_LT_TRY(x.PreferenceCreate(&call.pref));
  const uint64_t wsb = 32u << 20;
  NVFP4_LT_TRY(x.PreferenceSetAttribute(call.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
  cublasLtMatmulHeuristicResult_t r{};
  int got = 0;
  NVFP4_LT_TRY(x.AlgoGetHeuristic(h.h, call.desc, call.a, call.b, call.c, call.d, call.pref, 1, &r, &got));
  if (got == 0) return unsupported("cuBLASLt has no plan for this shape and type");
  const float alpha = 1.0f, beta = 0.0f;
  return cuda::median_us(iters, warmup, [&](int i) -> Status {
    NVFP4_ASSIGN_OR_RETURN(const void* w, weight(i));
    const cublasStatus_t st = x.Matmul(h.h, call.desc, &alpha, w, call.a, x_dev, call.b, &beta, dy.get(), call.c, dy.get(),
                                       call.d, &r.algo, ws.get(), wsb, nullptr);
    if (st != CUBLAS_STATUS_SUCCESS) return unsupported("cublasLtMatmul returned " + status_name(st));
    return Status::ok();
  });
}
}  // namespace

namespace {
// Uploads `copies` copies of the weight and one activation, then times the linear rotating weights.
template <typename T>
Result<double> rotated_linear_us(int64_t m, int64_t n, int64_t k, int iters, int warmup, cudaDataType_t dtype,
                                 const std::vector<T>& hw, const std::vector<T>& hx, int copies) {
  copies = std::max(copies, 1);
  std::vector<std::unique_ptr<cuda::DeviceBuffer<T>>> dw;
  for (int c = 0; c < copies; ++c) {
    dw.push_back(std::make_unique<cuda::DeviceBuffer<T>>());
    NVFP4_TRY(cuda::upload(*dw.back(), hw.data(), hw.size()));
  }
  cuda::DeviceBuffer<T> dx;
  NVFP4_TRY(cuda::upload(dx, hx.data(), hx.size()));
  return lt_linear_us(m, n, k, iters, warmup, dtype, dx.get(), [&](int i) -> Result<const void*> { return dw[i % copies]->get(); });
}
}  // namespace

Result<double> cublaslt_bf16_linear_us(int64_t m, int64_t n, int64_t k, int iters, int warmup, int copies) {
  return rotated_linear_us(m, n, k, iters, warmup, CUDA_R_16BF, random_bf16(static_cast<size_t>(n * k), 12345),
                           random_bf16(static_cast<size_t>(m * k), 777), copies);
}

Result<double> cublaslt_bf16_linear_us_with(int64_t m, int64_t n, int64_t k, int iters, int warmup,
                                            const std::function<Result<const void*>(int)>& weight) {
  const std::vector<uint16_t> hx = random_bf16(static_cast<size_t>(m * k), 777);
  cuda::DeviceBuffer<uint16_t> dx;
  NVFP4_TRY(cuda::upload(dx, hx.data(), hx.size()));
  return lt_linear_us(m, n, k, iters, warmup, CUDA_R_16BF, dx.get(), weight);
}

Result<double> cublaslt_fp8_linear_us(int64_t m, int64_t n, int64_t k, int iters, int warmup, int copies) {
  std::vector<uint8_t> hw(static_cast<size_t>(n * k)), hx(static_cast<size_t>(m * k));
  uint32_t st = 4242;
  for (auto* v : {&hw, &hx})
    for (auto& b : *v) {
      st = st * 1664525u + 1013904223u;
      b = static_cast<uint8_t>(0x30u | ((st >> 16) & 0x0Fu) | ((st >> 8) & 0x80u));
    }
  return rotated_linear_us(m, n, k, iters, warmup, CUDA_R_8F_E4M3, hw, hx, copies);
}

Result<Json> cublaslt_describe_call(int64_t m, int64_t n, int64_t k, const CublasLtPlanRequest& req) {
  const Api& x = api();
  if (!x.lib) return unsupported(x.error);
  Call call;
  static const uint8_t kDummy[16] = {};
  NVFP4_TRY(build_call(call, m, n, k, req, CUDA_R_16BF, kDummy + 1, kDummy + 2, kDummy + 3));
  auto desc_attr = [&](cublasLtMatmulDescAttributes_t at, size_t size) -> int64_t {
    int64_t v = 0;
    size_t written = 0;
    x.MatmulDescGetAttribute(call.desc, at, &v, size, &written);
    return v;
  };
  auto layout = [&](cublasLtMatrixLayout_t l) {
    Json j = Json::object();
    auto get = [&](cublasLtMatrixLayoutAttribute_t at, size_t size) -> int64_t {
      int64_t v = 0;
      size_t written = 0;
      x.MatrixLayoutGetAttribute(l, at, &v, size, &written);
      return v;
    };
    j.set("type", get(CUBLASLT_MATRIX_LAYOUT_TYPE, 4)).set("rows", get(CUBLASLT_MATRIX_LAYOUT_ROWS, 8));
    j.set("cols", get(CUBLASLT_MATRIX_LAYOUT_COLS, 8)).set("ld", get(CUBLASLT_MATRIX_LAYOUT_LD, 8));
    return j;
  };
  Json j = Json::object();
  j.set("compute_type", desc_attr(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, 4));
  j.set("scale_type", desc_attr(CUBLASLT_MATMUL_DESC_SCALE_TYPE, 4));
  j.set("pointer_mode", desc_attr(CUBLASLT_MATMUL_DESC_POINTER_MODE, 4));
  j.set("transa", desc_attr(CUBLASLT_MATMUL_DESC_TRANSA, 4));
  j.set("transb", desc_attr(CUBLASLT_MATMUL_DESC_TRANSB, 4));
  j.set("epilogue", desc_attr(CUBLASLT_MATMUL_DESC_EPILOGUE, 4));
  j.set("a_scale_mode", desc_attr(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, 4));
  j.set("b_scale_mode", desc_attr(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, 4));
  j.set("a_scale_pointer_offset", desc_attr(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, 8) - reinterpret_cast<int64_t>(kDummy));
  j.set("b_scale_pointer_offset", desc_attr(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, 8) - reinterpret_cast<int64_t>(kDummy));
  if (req.bias) j.set("bias_data_type", desc_attr(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, 4));
  j.set("a", layout(call.a)).set("b", layout(call.b)).set("c", layout(call.c)).set("d", layout(call.d));
  j.set("library", x.path).set("cublaslt_version", static_cast<int64_t>(x.GetVersion()));
  return j;
}

#endif  // NVFP4_WITH_CUDA

}  // namespace nvfp4
