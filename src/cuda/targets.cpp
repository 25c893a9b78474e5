// Which GPUs a build's kernels serve, from its target list: shared by CUDA and CPU-only builds, so the
// rule is one function whatever the build (and testable without a GPU).
#include <algorithm>
#include <cctype>

#include "nvfp4/cuda.hpp"

namespace nvfp4 {

namespace {
struct Image {
  bool ptx = false;
  int major = 0, minor = 0;
  char variant = 0;  // 'a' architecture-specific, 'f' family-specific, 0 portable
};

// "sm_120a" or "compute_90"; false for anything else, which then serves no GPU.
bool parse_image(std::string_view t, Image& out) {
  if (t.rfind("sm_", 0) == 0) {
    t.remove_prefix(3);
  } else if (t.rfind("compute_", 0) == 0) {
    t.remove_prefix(8);
    out.ptx = true;
  } else {
    return false;
  }
  if (!t.empty() && (t.back() == 'a' || t.back() == 'f')) {
    out.variant = t.back();
    t.remove_suffix(1);
  }
  if (t.size() < 2 || t.size() > 4) return false;
  int v = 0;
  for (char c : t) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    v = v * 10 + (c - '0');
  }
  out.major = v / 10;
  out.minor = v % 10;
  return true;
}

// The CUDA compatibility rules: an 'a' image runs on its own architecture only (its PTX too, which
// is what makes compute_90a unlike compute_90); an 'f' image on its family (same major, minor at
// least its own); portable machine code on its major's later minors, portable PTX on every later GPU.
bool loads_on(const Image& im, int major, int minor) {
  if (im.variant == 'a') return im.major == major && im.minor == minor;
  if (im.variant == 'f' || !im.ptx) return im.major == major && im.minor <= minor;
  return im.major < major || (im.major == major && im.minor <= minor);
}
}  // namespace

KernelCode kernels_cover(std::string_view targets, int major, int minor) {
  // The driver takes machine code over PTX, and of either the image closest to the GPU; of two
  // images for one architecture, which it takes is not documented, so a portable one among them
  // counts as taken: the arch-specific kernels would trap in it.
  for (bool ptx : {false, true}) {
    bool found = false, portable = false;
    int best = -1;
    size_t i = 0;
    while (i < targets.size()) {
      const size_t j = std::min(targets.find(' ', i), targets.size());
      Image im;
      if (parse_image(targets.substr(i, j - i), im) && im.ptx == ptx && loads_on(im, major, minor)) {
        const int cc = im.major * 10 + im.minor;
        if (cc > best) {
          best = cc;
          portable = false;
        }
        if (cc == best) portable = portable || im.variant != 'a';
        found = true;
      }
      i = j + 1;
    }
    if (found) return portable ? KernelCode::kPortable : KernelCode::kArchSpecific;
  }
  return KernelCode::kNone;
}

std::string_view built_cuda_targets() {
#ifdef NVFP4_CUDA_TARGETS
  return NVFP4_CUDA_TARGETS;
#else
  return {};
#endif
}

}  // namespace nvfp4
