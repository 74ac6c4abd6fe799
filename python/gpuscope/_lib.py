"""ctypes bindings of gpuscope.h (libgpuscope.so.0): the structures and functions, loaded once.

The library is found at GPUSCOPE_LIBRARY when it is set, else by the system's loader
(libgpuscope.so.0, as the Debian package installs it).
"""
import ctypes
import os
import threading

from .errors import GpuscopeError

OK = 0
INVALID_ARGUMENT = 1
NO_GPU = 2
UNKNOWN_WINDOW = 3
WINDOW_ENDED = 4
FORKED = 5
WINDOWS_OPEN = 6
INTERNAL = 7
TOO_MANY_WINDOWS = 8

ENERGY_SOURCES = {0: "none", 1: "counter", 2: "integrated power"}


class Options(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("sampling_ms", ctypes.c_double),
        ("energy_counter_ms", ctypes.c_double),
        ("gpus", ctypes.c_char_p),
        ("marks", ctypes.c_int),
        ("settle", ctypes.c_int),
    ]


class GpuWindow(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("index", ctypes.c_uint),
        ("uuid", ctypes.c_char * 96),
        ("energy_j", ctypes.c_double),
        ("energy_source", ctypes.c_int),
        ("mean_power_w", ctypes.c_double),
        ("peak_power_w", ctypes.c_double),
        ("gpu_util_pct", ctypes.c_double),
        ("sm_active_pct", ctypes.c_double),
        ("samples", ctypes.c_uint),
        ("lost", ctypes.c_int),
        ("estimated", ctypes.c_int),
    ]


class Window(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("id", ctypes.c_uint64),
        ("seconds", ctypes.c_double),
        ("energy_j", ctypes.c_double),
        ("gpu_count", ctypes.c_uint),
    ]


_loaded = None
_lock = threading.Lock()


def _declare(lib):
    p = ctypes.POINTER
    monitor = ctypes.c_void_p
    lib.gpuscope_options_init.argtypes = [p(Options)]
    lib.gpuscope_options_init.restype = None
    lib.gpuscope_monitor_open.argtypes = [p(Options), p(monitor)]
    lib.gpuscope_monitor_close.argtypes = [monitor]
    lib.gpuscope_monitor_gpu_count.argtypes = [monitor, p(ctypes.c_uint)]
    lib.gpuscope_monitor_open_windows.argtypes = [monitor, p(ctypes.c_uint)]
    lib.gpuscope_window_begin.argtypes = [monitor, ctypes.c_char_p, p(ctypes.c_uint64)]
    lib.gpuscope_window_end.argtypes = [monitor, ctypes.c_uint64, p(Window), p(GpuWindow),
                                        ctypes.c_size_t]
    for name in ("gpuscope_monitor_open", "gpuscope_monitor_close", "gpuscope_monitor_gpu_count",
                 "gpuscope_monitor_open_windows", "gpuscope_window_begin", "gpuscope_window_end"):
        getattr(lib, name).restype = ctypes.c_int
    lib.gpuscope_last_error.argtypes = []
    lib.gpuscope_last_error.restype = ctypes.c_char_p
    lib.gpuscope_version.argtypes = []
    lib.gpuscope_version.restype = ctypes.c_char_p
    return lib


def library():
    """The loaded library; GpuscopeError when it cannot be found."""
    global _loaded
    with _lock:
        if _loaded is None:
            path = os.environ.get("GPUSCOPE_LIBRARY") or "libgpuscope.so.0"
            try:
                _loaded = _declare(ctypes.CDLL(path))
            except OSError as e:
                raise GpuscopeError(
                    f"gpuscope's C library could not be loaded from {path} ({e}); install "
                    "gpuscope (its Debian package has libgpuscope.so.0) or set GPUSCOPE_LIBRARY "
                    "to the library's path") from None
        return _loaded


def last_error():
    return library().gpuscope_last_error().decode("utf-8", "replace")
