# Sanitizer builds (scripts/sanitize.sh runs the tests under them; docs/reliability.md):
#   -DGPUSCOPE_SANITIZE=address,undefined   ASan + UBSan, every target, the simulated NVML too
#   -DGPUSCOPE_SANITIZE=thread              TSan
# The flags apply to every target of the project (the executable, the shared libraries it loads,
# the tests), so a library that is dlopened or preloaded finds the runtime in the process.
set(GPUSCOPE_SANITIZE "" CACHE STRING "Sanitizers to build with: address,undefined or thread; empty for none")
if(GPUSCOPE_SANITIZE)
  if(GPUSCOPE_SANITIZE MATCHES "thread" AND GPUSCOPE_SANITIZE MATCHES "address")
    message(FATAL_ERROR "GPUSCOPE_SANITIZE: thread cannot be combined with address")
  endif()
  add_compile_options(-fsanitize=${GPUSCOPE_SANITIZE} -fno-omit-frame-pointer)
  # GCC 12 reports -Wmaybe-uninitialized inside libstdc++'s std::regex and std::function once
  # the sanitizers instrument them (false positives; the normal build keeps the warning).
  add_compile_options(-Wno-maybe-uninitialized)
  add_link_options(-fsanitize=${GPUSCOPE_SANITIZE})
  if(GPUSCOPE_SANITIZE MATCHES "undefined")
    # A UB finding fails the test that hit it instead of scrolling by.
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
  # Tests that measure memory (RSS goals, address-space limits) cannot hold under a sanitizer's
  # shadow memory; they skip themselves when this is defined.
  add_compile_definitions(GPUSCOPE_SANITIZED=1)
endif()
