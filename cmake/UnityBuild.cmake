# Unity builds (CMAKE_UNITY_BUILD=ON, scripts/setup.sh's default, UNITY=on): each target's files
# compiled eight to a translation unit, so the headers (the standard library's, GoogleTest's,
# nlohmann-json's, fmt's) are parsed once per eight files. Half of a clean build's time went to
# parsing them again for every file (CONTRIBUTING.md, "Build time").
#
# The files listed here define, in an anonymous namespace or as static, a name that another file
# of their target defines too (a kNaN, a `find`, a `Pipe`), so they are compiled on their own.
# A new file that collides fails the unity build with "redefinition of": rename the name, or
# list the file here. A file compiled into two static libraries that one program links (the
# sidecar writer: libgpuscope_trace and the CUPTI records' library) is listed too: in a unity
# object its definitions would come twice.
set(GPUSCOPE_UNITY_SKIP
  src/amd/rocm_smi_device.cpp
  src/analyze/analyzer.cpp
  src/analyze/mig_instances.cpp
  src/analyze/phases.cpp
  src/cli/serve_command.cpp
  src/docgen/completion_zsh.cpp
  src/ingest/logs/smi_dmon_format.cpp
  src/ingest/logs/smi_table_format.cpp
  src/ingest/monitoring/exporter_labels.cpp
  src/ingest/monitoring/monitoring.cpp
  src/ingest/tools/gssr_profile.cpp
  src/launch/job.cpp
  src/report/energy_view.cpp
  src/report/gpus_view.cpp
  src/report/node_energy_view.cpp
  src/report/phases_view.cpp
  src/report/processes_view.cpp
  src/report/runs_view.cpp
  src/report/site_report_data.cpp
  src/store/chunk_io.cpp
  src/store/guard_state.cpp
  src/store/node_tables.cpp
  src/store/row_inserter.cpp
  src/store/run_rows.cpp
  src/trace/sidecar_writer.cpp
  src/tsdb/answer_parse.cpp
  tests/analyze/analyzer_test.cpp
  tests/analyze/balance_test.cpp
  tests/analyze/derived_test.cpp
  tests/analyze/energy_test.cpp
  tests/analyze/mig_share_test.cpp
  tests/analyze/phases_test.cpp
  tests/analyze/score_test.cpp
  tests/analyze/trimming_test.cpp
  tests/blackbox/amd_profile_test.cpp
  tests/blackbox/devices_test.cpp
  tests/blackbox/gssr_test.cpp
  tests/blackbox/mig_test.cpp
  tests/carbon/electricity_maps_test.cpp
  tests/carbon/grid_source_test.cpp
  tests/carbon/uk_grid_test.cpp
  tests/exporter/jobstats_exposition_test.cpp
  tests/exporter/process_exposition_test.cpp
  tests/exporter/push_auth_test.cpp
  tests/exporter/web_config_test.cpp
  tests/fleet/job_queries_test.cpp
  tests/fleet/usage_test.cpp
  tests/ingest/dcgmi_dmon_test.cpp
  tests/ingest/health_logs_test.cpp
  tests/ingest/monitoring_mig_test.cpp
  tests/ingest/monitoring_test.cpp
  tests/ingest/smi_query_test.cpp
  tests/ingest/smi_table_test.cpp
  tests/launch/terminal_test.cpp
  tests/report/site_report_test.cpp
  tests/sim/locked_clocks_test.cpp
  tests/store/node_store_test.cpp
  tests/tsdb/client_http_test.cpp
  tests/tsdb/hostile_answers_test.cpp
  tests/unit/nvml_health_test.cpp
  tests/unit/nvml_mig_test.cpp
  tests/unit/processes_identity_test.cpp
)

# Marks the listed files of every target defined in `dir` and below.
function(gpuscope_unity_skip dir)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    if(NOT sources)
      continue()
    endif()
    foreach(source IN LISTS sources)
      if(source MATCHES "^\\$<")
        continue()
      endif()
      get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
      file(RELATIVE_PATH relative "${PROJECT_SOURCE_DIR}" "${path}")
      if(relative IN_LIST GPUSCOPE_UNITY_SKIP)
        set_source_files_properties("${path}" DIRECTORY "${source_dir}"
                                    PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      endif()
    endforeach()
  endforeach()
  get_property(subdirectories DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    gpuscope_unity_skip("${subdirectory}")
  endforeach()
endfunction()

if(CMAKE_UNITY_BUILD)
  gpuscope_unity_skip("${PROJECT_SOURCE_DIR}")
endif()
