// What the simulated driver charged this process so far (sim/costs.hpp: it sleeps through slow
// calls that the real driver spins through), in seconds; 0 where `library` is not loaded or is a
// real driver. The benchmarks add it to their CPU to give the CPU a real driver would burn.
#pragma once

#include <dlfcn.h>

namespace gpuscope::bench {

inline double sim_charged_s(const char* library) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  auto* spent = reinterpret_cast<long long (*)()>(dlsym(handle, "gpuscopeSimSpentNs"));
  const double s = spent != nullptr ? static_cast<double>(spent()) / 1e9 : 0;
  dlclose(handle);
  return s;
}

}  // namespace gpuscope::bench
