/* A C99 program using gpuscope.h alone: one window over the visible GPUs, printed. Exits 0 when
 * the window measured energy from the counter on every GPU. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <gpuscope.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

int main(void) {
  gpuscope_monitor* monitor = NULL;
  gpuscope_options options;
  gpuscope_options_init(&options);
  options.sampling_ms = 50;
  if (gpuscope_monitor_open(&options, &monitor) != GPUSCOPE_OK) {
    fprintf(stderr, "gpuscope: %s\n", gpuscope_last_error());
    return 1;
  }
  uint64_t id = 0;
  if (gpuscope_window_begin(monitor, "sleep", &id) != GPUSCOPE_OK) return 1;
  struct timespec pause = {0, 300000000L};
  nanosleep(&pause, NULL);
  gpuscope_window window;
  gpuscope_gpu_window gpus[8];
  gpuscope_window_init(&window);
  gpuscope_gpu_window_init(gpus, 8);
  if (gpuscope_window_end(monitor, id, &window, gpus, 8) != GPUSCOPE_OK) {
    fprintf(stderr, "gpuscope: %s\n", gpuscope_last_error());
    return 1;
  }
  printf("libgpuscope %s: %.3f s, %.2f J over %u GPU(s)\n", gpuscope_version(), window.seconds,
         window.energy_j, window.gpu_count);
  int ok = window.gpu_count > 0 && window.seconds > 0.25;
  for (unsigned k = 0; k < window.gpu_count && k < 8; ++k) {
    printf("  GPU %u %s: %.2f J, %.1f W mean, %.1f %% busy, %u samples\n", gpus[k].index,
           gpus[k].uuid, gpus[k].energy_j, gpus[k].mean_power_w, gpus[k].gpu_util_pct,
           gpus[k].samples);
    ok = ok && gpus[k].energy_source == GPUSCOPE_ENERGY_COUNTER && gpus[k].energy_j > 0 &&
         !isnan(gpus[k].energy_j);
  }
  return gpuscope_monitor_close(monitor) == GPUSCOPE_OK && ok ? 0 : 1;
}
