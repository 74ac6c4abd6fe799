"""Monitor: windows over the GPUs this process may use (docs/python.md)."""
import collections
import ctypes
import functools
import math
import os
import sys
import threading
import time
import warnings

from . import _lib
from .context import job_context
from .errors import GpuscopeError, NoGpuError, WindowError
from .results import GpuWindow, WindowResult

_NAN = math.nan


def _sync_torch():
    """torch.cuda.synchronize() when PyTorch is loaded and has touched the GPU: the kernels
    queued before a window's edge then run before it, not after."""
    torch = sys.modules.get("torch")
    if torch is None:
        return
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_available() and cuda.is_initialized():
        cuda.synchronize()


class _Buffers(threading.local):
    def __init__(self):
        self.window = _lib.Window()
        self.window_ref = ctypes.byref(self.window)
        self.gpus = None


def _gpus_of(raw):
    """The GpuWindow of each GPU of a window, from the C structures' copy."""
    return (GpuWindow(g.index, g.uuid.decode(), g.energy_j,
                      _lib.ENERGY_SOURCES.get(g.energy_source, "none"), g.mean_power_w,
                      g.peak_power_w, g.gpu_util_pct, g.sm_active_pct, g.samples, bool(g.lost),
                      bool(g.estimated))
            for g in raw)


class Monitor:
    """The GPUs this process may use, sampled in the background; windows over them.

    gpus: None for those CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES / SLURM leave this
      process, else a list as `gpuscope profile --gpus` takes ("0,1", "GPU-...", "all").
    sampling_ms: the sampling interval (100). energy_counter_ms: read the energy counter every
      this many ms (0: at every sample; on an H200 a read spins a core for 3 ms).
    sync: "auto" (torch.cuda.synchronize() at window edges when PyTorch is loaded), True or False.
    marks: under `gpuscope profile`, every window is a phase of the run database too.
    settle: ending a window waits for each GPU's next sample (up to two sampling intervals) and
      interpolates its end as its begin is; without, the end is extrapolated from the last sample
      at once (exact while power holds steady over the last interval).
    required: False to go on without GPUs (no driver, none visible): windows then measure time
      only, energies are NaN and `reason` says why.
    history: how many ended windows `history` keeps (oldest dropped first).
    """

    def __init__(self, gpus=None, sampling_ms=100, energy_counter_ms=0, sync="auto", marks=True,
                 settle=False, required=True, history=10000):
        self._handle = None
        self._pid = os.getpid()
        self._sync = sync
        self._lock = threading.Lock()
        self._by_name = {}
        self._buffers = _Buffers()
        self._fallback = {}  # without GPUs: window id -> (name, begin time)
        self._next_fallback = 1
        self.history = collections.deque(maxlen=history)
        self.available = False
        self.reason = ""
        self.context = job_context()  # host, SLURM job and array ids, rank, local rank
        self.gpu_count = 0
        try:
            self._open(gpus, sampling_ms, energy_counter_ms, marks, settle)
        except (NoGpuError, GpuscopeError) as e:
            if required or (type(e) is GpuscopeError and e.status not in (0, _lib.NO_GPU)):
                raise
            self.reason = str(e)
            warnings.warn(f"gpuscope: measuring time only: {e}", RuntimeWarning, stacklevel=2)

    def _open(self, gpus, sampling_ms, energy_counter_ms, marks, settle):
        lib = _lib.library()
        options = _lib.Options()
        lib.gpuscope_options_init(ctypes.byref(options))
        options.sampling_ms = float(sampling_ms)
        options.energy_counter_ms = float(energy_counter_ms)
        options.gpus = gpus.encode() if gpus else None
        options.marks = 1 if marks else 0
        options.settle = 1 if settle else 0
        handle = ctypes.c_void_p()
        status = lib.gpuscope_monitor_open(ctypes.byref(options), ctypes.byref(handle))
        if status == _lib.NO_GPU:
            raise NoGpuError(_lib.last_error(), status)
        if status != _lib.OK:
            raise GpuscopeError(_lib.last_error(), status)
        self._handle = handle
        self._lib = lib
        count = ctypes.c_uint()
        self._check(lib.gpuscope_monitor_gpu_count(handle, ctypes.byref(count)))
        self.gpu_count = count.value
        self.available = True

    def _check(self, status):
        if status == _lib.OK:
            return
        message = _lib.last_error()
        if status in (_lib.UNKNOWN_WINDOW, _lib.WINDOW_ENDED, _lib.TOO_MANY_WINDOWS):
            raise WindowError(message, status)
        if status == _lib.NO_GPU:
            raise NoGpuError(message, status)
        raise GpuscopeError(message, status)

    def _edge(self, sync):
        if sync if sync is not None else (self._sync is True or self._sync == "auto"):
            _sync_torch()

    # Windows by id -------------------------------------------------------------------------

    def begin(self, name, sync=None):
        """Begins a window named `name` now; returns its id for end()."""
        self._edge(sync)
        if self._handle is None:
            with self._lock:
                if len(self._fallback) >= 65536:  # as the C library: bounded, never growing
                    raise WindowError("65536 windows are open and none was ended; end windows "
                                      "before beginning more", _lib.TOO_MANY_WINDOWS)
                wid, self._next_fallback = self._next_fallback, self._next_fallback + 1
                self._fallback[wid] = (str(name), time.monotonic())
            return wid
        wid = ctypes.c_uint64()
        self._check(self._lib.gpuscope_window_begin(self._handle, str(name).encode(),
                                                    ctypes.byref(wid)))
        return wid.value

    def end(self, wid, sync=None, name=""):
        """Ends window `wid` now; its WindowResult (also appended to `history`)."""
        self._edge(sync)
        if self._handle is None:
            result = self._end_fallback(wid)
        else:
            result = self._end_measured(wid, name)
        self.history.append(result)
        return result

    def _end_fallback(self, wid):
        with self._lock:
            if wid not in self._fallback:
                raise WindowError(f"window {wid} was ended already or never begun", _lib.WINDOW_ENDED)
            name, began = self._fallback.pop(wid)
        return WindowResult(wid, name, time.monotonic() - began, _NAN, ())

    def _end_measured(self, wid, name):
        b = self._buffers
        if b.gpus is None:
            b.gpus = (_lib.GpuWindow * max(self.gpu_count, 1))()
        self._check(self._lib.gpuscope_window_end(self._handle, wid, b.window_ref, b.gpus,
                                                  self.gpu_count))
        w = b.window
        count = min(w.gpu_count, self.gpu_count)
        raw = (_lib.GpuWindow * count).from_buffer_copy(b.gpus, 0) if count else ()
        return WindowResult(w.id, name, w.seconds, w.energy_j, functools.partial(_gpus_of, raw))

    # Conveniences ---------------------------------------------------------------------------

    def window(self, name, sync=None):
        """A context manager: `with mon.window("train") as w: ...`, then w.energy_j and the
        rest of WindowResult's fields once the block has ended."""
        return _WindowContext(self, name, sync)

    def measure(self, name=None, sync=None):
        """A decorator: each call of the function is a window (named after the function unless
        `name` says); the last one is the function's `last_window`, all are in `history`."""
        def decorate(function):
            label = name or function.__qualname__

            @functools.wraps(function)
            def measured(*args, **kwargs):
                with self.window(label, sync) as w:
                    value = function(*args, **kwargs)
                measured.last_window = w.result
                return value
            measured.last_window = None
            return measured
        return decorate

    def steps(self, iterable, name="step", sync=None):
        """Yields the items of `iterable`, each iteration (the loop's body) a window named
        `name`; the windows are in `history`, the last one in `last_step`."""
        for item in iterable:
            wid = self.begin(name, sync)
            try:
                yield item
            finally:
                self.last_step = self.end(wid, sync, name)

    # Zeus' names ----------------------------------------------------------------------------

    def begin_window(self, key, sync_execution=None):
        """As Zeus' ZeusMonitor.begin_window: windows named by a key unique among open ones."""
        with self._lock:
            if key in self._by_name:
                raise WindowError(f"a window named {key!r} is open already; end it first",
                                  _lib.INVALID_ARGUMENT)
            self._by_name[key] = None
        try:
            wid = self.begin(key, sync_execution)
        except BaseException:
            with self._lock:
                self._by_name.pop(key, None)
            raise
        with self._lock:
            self._by_name[key] = wid
        return wid

    def end_window(self, key, sync_execution=None, cancel=False):
        """As Zeus' ZeusMonitor.end_window: the WindowResult (with Zeus' `time`, `gpu_energy`
        and `total_energy` too); with cancel=True the window is dropped and None returned."""
        with self._lock:
            wid = self._by_name.pop(key, None)
        if wid is None:
            raise WindowError(f"no window named {key!r} is open", _lib.UNKNOWN_WINDOW)
        result = self.end(wid, sync_execution, key)
        if cancel:
            self.history.pop()
            return None
        return result

    # Lifetime -------------------------------------------------------------------------------

    @property
    def open_windows(self):
        if self._handle is None:
            return len(self._fallback)
        count = ctypes.c_uint()
        self._check(_lib.library().gpuscope_monitor_open_windows(self._handle, ctypes.byref(count)))
        return count.value

    def close(self):
        """Stops the sampling. Windows still open are lost, and said so with a warning."""
        handle, self._handle = self._handle, None
        if handle is None or os.getpid() != self._pid:
            return
        status = _lib.library().gpuscope_monitor_close(handle)
        if status == _lib.WINDOWS_OPEN:
            warnings.warn(f"gpuscope: {_lib.last_error()}", RuntimeWarning, stacklevel=2)
        elif status != _lib.OK:
            raise GpuscopeError(_lib.last_error(), status)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 (the interpreter may be shutting down)
            pass


class _WindowContext:
    """`with mon.window(name) as w`: w is this object; after the block, its attributes are the
    WindowResult's (w.energy_j, w.seconds, w.gpus...)."""

    def __init__(self, monitor, name, sync):
        self._monitor = monitor
        self._name = name
        self._sync = sync
        self._id = None
        self.result = None

    def __enter__(self):
        self._id = self._monitor.begin(self._name, self._sync)
        return self

    def __exit__(self, *exc):
        self.result = self._monitor.end(self._id, self._sync, self._name)
        return False

    def __getattr__(self, attribute):
        result = self.__dict__.get("result")
        if result is None:
            raise AttributeError(
                f"window {self._name!r} has not ended yet: read {attribute} after its with block")
        return getattr(result, attribute)
