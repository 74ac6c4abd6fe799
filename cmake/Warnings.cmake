# Warning policy: one interface target every gpuscope target links.
add_library(gpuscope_warnings INTERFACE)
target_compile_options(gpuscope_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wunused -Woverloaded-virtual -Wconversion -Wsign-conversion
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
if(GPUSCOPE_WERROR)
  target_compile_options(gpuscope_warnings INTERFACE -Werror)
endif()
