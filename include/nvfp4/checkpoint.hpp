// ComfyUI mixed-precision checkpoints (docs/numerics.md §7): which layers are quantized, the strict
// checks of an NVFP4 layer's tensors, its weight as a Tensor, and bf16 -> NVFP4 conversion of a
// whole checkpoint bit-identical to ComfyUI's own weight quantization (comfy-cuda recipe, §2.1).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nvfp4/error.hpp"
#include "nvfp4/format.hpp"
#include "nvfp4/io.hpp"
#include "nvfp4/safetensors.hpp"

namespace nvfp4 {

// One quantized layer <L>: its format comes from <L>.comfy_quant (UTF-8 JSON in a U8 tensor) or the
// file's _quantization_metadata entry; both must agree when both exist.
struct CheckpointLayer {
  std::string name;            // <L>
  std::string format;          // "nvfp4", or another ComfyUI format (listed, not interpreted)
  Json config;                 // the comfy_quant JSON (or the metadata entry)
  std::vector<std::string> tensors;  // every <L>.* tensor, sorted
  uint64_t bytes = 0;          // their total size
  // NVFP4 layers only (format == "nvfp4"), all checked against each other:
  int64_t n16 = 0, k16 = 0;    // padded weight shape: weight is U8 [n16][k16/2]
  int64_t n = 0, k = 0;        // logical shape: from bias / pre_quant_scale lengths, else n16 / k16
  StDtype scale_dtype = StDtype::kF8E4M3;  // F8_E4M3, or U8 in older files
  float weight_scale_2 = 0;    // s_w
  bool has_input_scale = false;
  float input_scale = 0;       // static activation scale, when present
  bool has_bias = false, has_pre_quant_scale = false;
};

// Why v cannot be an NVFP4 weight's global scale (weight_scale_2), or empty if it can: it must be
// finite and >= 0, and not -0 (docs/numerics.md §7.3). The checkpoint reader and validate's --inputs
// arrays both apply it.
std::string weight_global_scale_problem(float v);

// Every quantized layer of the file, sorted by name. Errors name the file, the tensor and the rule:
// comfy_quant not a U8 JSON object with a string "format", _quantization_metadata not JSON with a
// "layers" object, a listed layer without tensors; for NVFP4: weight not U8 2-D with even columns,
// weight_scale not F8_E4M3/U8 [roundup(n16,128)][roundup(k16/16,4)], weight_scale_2 missing, not
// F32 [] or [1], or not finite and >= 0, or -0; input_scale not F32 []/[1] finite > 0, or
// f32(input_scale * weight_scale_2) not finite; bias or pre_quant_scale of the wrong length or dtype.
Result<std::vector<CheckpointLayer>> checkpoint_layers(const SafetensorsFile& f);
Result<CheckpointLayer> checkpoint_layer(const SafetensorsFile& f, const std::string& name);

// The layer's weight as a hi_first, swizzled Tensor of logical shape [n][k] (n, k <= 0: the
// layer's own n, k). k may be narrower than the layer's (an activation's width) as long as it
// rounds up to k16.
Result<Tensor> load_nvfp4_weight(const SafetensorsFile& f, const CheckpointLayer& l, int64_t n = 0, int64_t k = 0);

// The bytes ComfyUI stores for one NVFP4 Linear made from a bf16 weight [n][k]:
// s_w = f32(bf16(amax/2688)) (§2.4), comfy-cuda codes hi_first padded to 16, swizzled scales.
struct Nvfp4Weight {
  Tensor t;  // t.global_scale == s_w
  std::vector<uint8_t> comfy_quant;  // the layer's UTF-8 JSON marker
};
Result<Nvfp4Weight> quantize_linear_weight(const uint16_t* w_bf16, int64_t n, int64_t k, int threads = 0);
const std::string& nvfp4_comfy_quant_json();  // {"format": "nvfp4"}

struct QuantizeCheckpointOptions {
  std::string layers_regex;  // ECMAScript, searched in the layer name <L>; empty = every candidate
  int threads = 0;
  std::function<void(const std::string&)> progress;  // human progress lines
};
struct QuantizeCheckpointResult {
  int64_t quantized = 0, copied = 0;
  uint64_t bytes_in = 0, bytes_out = 0;
  std::vector<std::string> from_wider;  // layers whose f16/f32 weight was rounded to bf16 first
  Json to_json() const;
};
// Rewrites IN as OUT: each 2-D BF16/F16/F32 tensor <L>.weight whose layer matches the regex and is
// not quantized already becomes <L>.weight / .weight_scale / .weight_scale_2 / .comfy_quant, and
// _quantization_metadata lists it; every other tensor and metadata entry is copied unchanged. One
// layer is in memory at a time; OUT appears only when complete.
Result<QuantizeCheckpointResult> quantize_checkpoint(const std::string& in, const std::string& out,
                                                     const QuantizeCheckpointOptions& opt);

}  // namespace nvfp4
