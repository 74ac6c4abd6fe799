"""What a window measured, with its units in the field names (J, W, %, s)."""
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Tuple


@dataclass(frozen=True)
class GpuWindow:
    """One GPU over one window."""
    index: int             # the GPU's index on the node (NVML's; AMD GPUs after NVIDIA's)
    uuid: str
    energy_j: float        # NaN when unknown
    energy_source: str     # "counter", "integrated power" or "none"
    mean_power_w: float
    peak_power_w: float    # the highest power reading inside the window (NaN: none)
    gpu_util_pct: float    # mean GPU activity, time-weighted
    sm_active_pct: float   # mean SM active (NaN where the GPU has no such metric)
    samples: int           # samples taken inside the window
    lost: bool             # the GPU fell off the bus: its figures are NaN
    estimated: bool        # no sample inside the window: figures from the readings around it

    @property
    def energy_wh(self):
        return self.energy_j / 3600.0


@dataclass(frozen=True)
class WindowResult:
    """A window: its time and the GPUs' energy and activity over it. `gpus` is a tuple of
    GpuWindow, one per GPU measured (made when first read: ending a window stays cheap)."""
    id: int
    name: str
    seconds: float
    energy_j: float        # the sum over the GPUs that report energy; NaN if one was lost
    _gpus: Any = field(default=(), repr=False, compare=False)

    @cached_property
    def gpus(self) -> Tuple[GpuWindow, ...]:
        made = self._gpus
        return made if isinstance(made, tuple) else tuple(made())

    @property
    def energy_wh(self):
        return self.energy_j / 3600.0

    @property
    def mean_power_w(self):
        return self.energy_j / self.seconds if self.seconds > 0 else math.nan

    @property
    def gpu_energy(self):
        """{GPU index: joules}, as Zeus' Measurement.gpu_energy."""
        return {g.index: g.energy_j for g in self.gpus}

    @property
    def time(self):
        """Seconds, as Zeus' Measurement.time."""
        return self.seconds

    @property
    def total_energy(self):
        """Joules, as Zeus' Measurement.total_energy."""
        return self.energy_j

    def as_dict(self):
        return {
            "id": self.id, "name": self.name, "seconds": self.seconds, "energy_j": self.energy_j,
            "gpus": [dict(g.__dict__) for g in self.gpus],  # noqa: C416
        }
