"""gpuscope from inside your code: the energy and activity of the GPUs this process may use over
windows of it, and gpuscope's run databases as DataFrames (docs/python.md).

    import gpuscope
    mon = gpuscope.Monitor()
    with mon.window("train") as w:
        train()
    print(w.energy_j, w.seconds, w.gpus[0].sm_active_pct)
"""
from . import callbacks
from .context import job_context
from .errors import GpuscopeError, NoGpuError, WindowError
from .monitor import Monitor
from .results import GpuWindow, WindowResult
from .runs import Run, analyze, read_run

__version__ = "0.1.0"

__all__ = ["Monitor", "WindowResult", "GpuWindow", "GpuscopeError", "NoGpuError", "WindowError",
           "Run", "read_run", "analyze", "library_version", "job_context", "callbacks"]


def library_version():
    """The version of the loaded libgpuscope.so.0."""
    from . import _lib
    return _lib.library().gpuscope_version().decode()

