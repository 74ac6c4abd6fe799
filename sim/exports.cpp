// The exported C symbols, expanded from the one entry-point list: each forwards to
// gpuscope::sim::<id>. Built twice: as the current driver (every symbol of every entry) and, with
// GPUSCOPE_SIM_LEGACY, as an old driver that has only the oldest symbol of each entry; its
// version script (legacy.map) also withholds the GPM symbols, which old drivers lack.
#include "nvml/entry_points.hpp"
#include "sim/api.hpp"
#include "sim/costs.hpp"
#include "sim/driver.hpp"

#define GPUSCOPE_SIM_API __attribute__((visibility("default")))

#define GPUSCOPE_SIM_EXPORT(id, params, args, symbol)      \
  extern "C" GPUSCOPE_SIM_API nvmlReturn_t symbol params { \
    return gpuscope::sim::id args;                         \
  }

#if GPUSCOPE_SIM_LEGACY
#define GPUSCOPE_SIM_X1(id, req, params, args, s1) GPUSCOPE_SIM_EXPORT(id, params, args, s1)
#define GPUSCOPE_SIM_X2(id, req, params, args, s1, s2) GPUSCOPE_SIM_EXPORT(id, params, args, s2)
#define GPUSCOPE_SIM_X3(id, req, params, args, s1, s2, s3) GPUSCOPE_SIM_EXPORT(id, params, args, s3)
#else
#define GPUSCOPE_SIM_X1(id, req, params, args, s1) GPUSCOPE_SIM_EXPORT(id, params, args, s1)
#define GPUSCOPE_SIM_X2(id, req, params, args, s1, s2) \
  GPUSCOPE_SIM_EXPORT(id, params, args, s1)            \
  GPUSCOPE_SIM_EXPORT(id, params, args, s2)
#define GPUSCOPE_SIM_X3(id, req, params, args, s1, s2, s3) \
  GPUSCOPE_SIM_EXPORT(id, params, args, s1)                \
  GPUSCOPE_SIM_EXPORT(id, params, args, s2)                \
  GPUSCOPE_SIM_EXPORT(id, params, args, s3)
#endif

GPUSCOPE_NVML_ENTRY_POINTS(GPUSCOPE_SIM_X1, GPUSCOPE_SIM_X2, GPUSCOPE_SIM_X3)

extern "C" GPUSCOPE_SIM_API const char* GPUSCOPE_NVML_ERROR_STRING_SYMBOL(nvmlReturn_t result) {
  return gpuscope::sim::ErrorString(result);
}

// Not NVML: why the last call failed (nvmlInit above all), for the loader's error message.
extern "C" GPUSCOPE_SIM_API const char* gpuscopeSimLastError(void) {
  return gpuscope::sim::process_driver().last_error();
}

// Not NVML: the nanoseconds the driver costs charged in this process (sim/costs.hpp), which a
// real driver would have spent spinning on the callers' CPUs.
extern "C" GPUSCOPE_SIM_API long long gpuscopeSimSpentNs(void) {
  return gpuscope::sim::spent_ns();
}

// Not NVML: the name of the scenario loaded by the last nvmlInit.
extern "C" GPUSCOPE_SIM_API const char* gpuscopeSimScenarioName(void) {
  return gpuscope::sim::process_driver().scenario_name();
}
