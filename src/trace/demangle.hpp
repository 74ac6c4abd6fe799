// Kernel names for people: CUDA reports C++ kernels by their mangled names (_Z...).
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::trace {

// The demangled name (abi::__cxa_demangle) of a mangled C++ name; other names as they are.
std::string demangle(const std::string& name);

// nsys's shortName of a (demangled) kernel name: the function's own name, without return type,
// scope, template arguments and parameters ("void ns::gemm<float>(int)" → "gemm").
std::string short_kernel_name(std::string_view demangled);

}  // namespace gpuscope::trace
