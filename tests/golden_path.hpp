// Where the unpacked golden vectors live (set by CMake to <build>/golden).
#pragma once
#include <string>

#ifndef NVFP4_GOLDEN_DIR
#error "NVFP4_GOLDEN_DIR must point at the unpacked golden vectors"
#endif

inline std::string golden_path(const std::string& rel) { return std::string(NVFP4_GOLDEN_DIR) + "/" + rel; }
