"""gpuscope's exceptions: each says what went wrong and what to do."""


class GpuscopeError(RuntimeError):
    """A call of gpuscope failed; `status` is the C library's status (0 when none)."""

    def __init__(self, message, status=0):
        super().__init__(message)
        self.status = status


class NoGpuError(GpuscopeError):
    """No GPU driver here, or no GPU this process may use. Monitor(required=False) goes on
    without GPUs instead."""


class WindowError(GpuscopeError, ValueError):
    """A window ended twice, never begun, or a name already open (begin_window/end_window)."""
