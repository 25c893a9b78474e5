// libFuzzer harness for the safetensors header parser and the ComfyUI layer checks on top of it:
// any byte string must give a value or a one-line error, never a crash, hang or over-read.
// Seeds: fuzz/corpus/safetensors/ (a quantized NVFP4 layer, plain tensors, an empty header).
#include <cstddef>
#include <cstdint>

#include "nvfp4/checkpoint.hpp"
#include "nvfp4/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto f = nvfp4::SafetensorsFile::view(data, size, "fuzz-input");
  if (!f.is_ok()) return 0;
  // Every accepted tensor must lie inside the input.
  for (const nvfp4::StTensor& t : f->tensors()) {
    const uint8_t* p = f->data(t);
    if (p < data || p + t.nbytes() > data + size) __builtin_trap();
  }
  auto layers = nvfp4::checkpoint_layers(f.value());
  if (!layers.is_ok()) return 0;
  for (const auto& l : layers.value())
    if (l.format == "nvfp4") (void)nvfp4::load_nvfp4_weight(f.value(), l);
  return 0;
}
