# Every dependency comes from a Debian package (scripts/setup.sh installs them).
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(tl-expected REQUIRED)
if(GPUSCOPE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(GPUSCOPE_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
# Exporters (src/export): libevent's evhttp serves /metrics; libcurl pushes to VictoriaMetrics
# (its header at build time, the library loaded at run time, so that only --push pays for the TLS
# libraries it brings); cpp-httplib is the tests' and benchmarks' client.
find_package(PkgConfig REQUIRED)
pkg_check_modules(cpp_httplib REQUIRED IMPORTED_TARGET cpp-httplib)
pkg_check_modules(libevent REQUIRED IMPORTED_TARGET libevent_core libevent_extra libevent_pthreads)
find_package(CURL REQUIRED)
# serve --web-config: exporter-toolkit's YAML; OpenSSL's and libevent_openssl's headers (the
# libraries are loaded at run time, docs/live.md "Security").
find_package(yaml-cpp REQUIRED)
find_package(OpenSSL REQUIRED)
