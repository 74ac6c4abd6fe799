/* gpuscope's C library (libgpuscope.so.0): energy and activity of the GPUs this process may use,
 * measured over named windows from inside a program (docs/c-api.md).
 *
 *   gpuscope_monitor* mon;
 *   if (gpuscope_monitor_open(NULL, &mon) != GPUSCOPE_OK) { puts(gpuscope_last_error()); ... }
 *   uint64_t w;
 *   gpuscope_window_begin(mon, "train", &w);
 *   train();
 *   gpuscope_window result;
 *   gpuscope_gpu_window gpus[8];
 *   gpuscope_window_end(mon, w, &result, gpus, 8);
 *   printf("%.1f J in %.2f s\n", result.energy_j, result.seconds);
 *   gpuscope_monitor_close(mon);
 *
 * A background thread per GPU samples the driver; beginning or ending a window reads what it
 * sampled and never waits on a driver call. Every function returns a gpuscope_status; on failure
 * gpuscope_last_error() says what went wrong and what to do, in this thread. No C++ exception
 * crosses this interface. Thread-safe: windows may be begun and ended from any thread.
 *
 * Compatibility: the soname's 0 changes only when this interface breaks. Structures that may
 * grow start with struct_size, which the caller sets (gpuscope_*_init do it).
 */
#ifndef GPUSCOPE_H
#define GPUSCOPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPUSCOPE_API_VERSION 1

typedef struct gpuscope_monitor gpuscope_monitor;

typedef enum gpuscope_status {
  GPUSCOPE_OK = 0,
  GPUSCOPE_ERROR_INVALID_ARGUMENT = 1, /* a NULL pointer, a bad option, a name too long */
  GPUSCOPE_ERROR_NO_GPU = 2,           /* no GPU driver here, or no GPU this process may use */
  GPUSCOPE_ERROR_UNKNOWN_WINDOW = 3,   /* no window of that id was begun on this monitor */
  GPUSCOPE_ERROR_WINDOW_ENDED = 4,     /* the window was ended already */
  GPUSCOPE_ERROR_FORKED = 5,           /* the monitor was opened by the parent of this process */
  GPUSCOPE_ERROR_WINDOWS_OPEN = 6,     /* closed, but windows were never ended (they are lost) */
  GPUSCOPE_ERROR_INTERNAL = 7,         /* a bug: please report it with gpuscope_last_error() */
  GPUSCOPE_ERROR_TOO_MANY_WINDOWS = 8  /* 65536 windows are open: end some before beginning more */
} gpuscope_status;

/* Where a GPU's energy over a window came from. */
typedef enum gpuscope_energy_source {
  GPUSCOPE_ENERGY_NONE = 0,             /* neither: energy_j is NaN */
  GPUSCOPE_ENERGY_COUNTER = 1,          /* the GPU's energy counter */
  GPUSCOPE_ENERGY_INTEGRATED_POWER = 2  /* power readings integrated over time (no counter) */
} gpuscope_energy_source;

typedef struct gpuscope_options {
  size_t struct_size;      /* sizeof(gpuscope_options) */
  double sampling_ms;      /* the GPUs' sampling interval; 0: 100 ms (10 to 3600000) */
  double energy_counter_ms; /* read the energy counter every this many ms; 0: at every sample */
  const char* gpus;        /* NULL: the GPUs this process may use (CUDA_VISIBLE_DEVICES,
                              ROCR_VISIBLE_DEVICES, SLURM's); else as gpuscope profile --gpus */
  int marks;               /* nonzero (the default): under gpuscope profile, every window is a
                              phase of the run database too */
  int settle;              /* nonzero: gpuscope_window_end waits for each GPU's next sample (at
                              most two sampling intervals) and interpolates the end as it does the
                              begin; 0 (the default): it extrapolates from the last sample at once */
} gpuscope_options;

typedef struct gpuscope_gpu_window {
  size_t struct_size;
  unsigned index;          /* the GPU's index on the node (NVML's; AMD GPUs after NVIDIA's) */
  char uuid[96];           /* GPU-..., MIG-... or an AMD GPU's UUID */
  double energy_j;         /* NaN when unknown */
  gpuscope_energy_source energy_source;
  double mean_power_w;     /* energy_j / seconds */
  double peak_power_w;     /* the highest power reading inside the window; NaN: none */
  double gpu_util_pct;     /* mean GPU activity (utilization, time-weighted); NaN: none */
  double sm_active_pct;    /* mean SM active (GPM or DCGM); NaN where the GPU has no such metric */
  unsigned samples;        /* samples taken inside the window */
  int lost;                /* nonzero: the GPU fell off the bus; its figures are NaN */
  int estimated;           /* nonzero: no sample fell inside the window (shorter than the
                              sampling interval): the figures come from the readings around it */
} gpuscope_gpu_window;

typedef struct gpuscope_window {
  size_t struct_size;
  uint64_t id;
  double seconds;          /* CLOCK_MONOTONIC from begin to end */
  double energy_j;         /* the GPUs' sum; NaN if any GPU's is unknown */
  unsigned gpu_count;      /* GPUs measured (gpus[] holds min(gpu_count, capacity) of them) */
} gpuscope_window;

void gpuscope_options_init(gpuscope_options* options);
void gpuscope_window_init(gpuscope_window* window);
void gpuscope_gpu_window_init(gpuscope_gpu_window* gpu, size_t count);

/* Opens a monitor: the GPUs' library (NVML, AMD SMI or ROCm SMI, loaded at run time), the GPUs
 * this process may use, a sampling thread per GPU. options may be NULL (the defaults). */
gpuscope_status gpuscope_monitor_open(const gpuscope_options* options, gpuscope_monitor** out);

/* Stops the sampling and frees the monitor (also after GPUSCOPE_ERROR_WINDOWS_OPEN). */
gpuscope_status gpuscope_monitor_close(gpuscope_monitor* monitor);

/* The GPUs measured, in the order of every window's gpus[]. */
gpuscope_status gpuscope_monitor_gpu_count(const gpuscope_monitor* monitor, unsigned* count);

/* Begins a window named `name` (UTF-8, at most 512 bytes; several may share a name) at this
 * instant; its id goes to *id. Windows may nest and overlap freely. */
gpuscope_status gpuscope_window_begin(gpuscope_monitor* monitor, const char* name, uint64_t* id);

/* Ends window `id` at this instant: its totals in *window, each GPU's figures in gpus[0 ..
 * min(gpu_count, capacity)) (gpus may be NULL with capacity 0). */
gpuscope_status gpuscope_window_end(gpuscope_monitor* monitor, uint64_t id,
                                    gpuscope_window* window, gpuscope_gpu_window* gpus,
                                    size_t capacity);

/* The windows begun and not yet ended. */
gpuscope_status gpuscope_monitor_open_windows(const gpuscope_monitor* monitor, unsigned* count);

/* Why this thread's last call failed, and what to do ("" after a success). Valid until this
 * thread's next call. */
const char* gpuscope_last_error(void);

/* A status in words. */
const char* gpuscope_status_string(gpuscope_status status);

/* "0.1.0" */
const char* gpuscope_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUSCOPE_H */
