"""The Python package's tests run against the build tree: its libgpuscope.so.0, the simulated
NVML (through the real loader, named by GPUSCOPE_NVML_LIBRARY as a site would name the real
one), the shipped scenarios and the gpuscope binary. ctest passes the build directory."""
import os
import sys
import time
from pathlib import Path

import pytest

BUILD = Path(os.environ.get("GPUSCOPE_TEST_BUILD_DIR", Path(__file__).resolve().parents[2] / "build"))
SOURCE = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(SOURCE / "python"))

SIM_NVML = BUILD / "lib" / "gpuscope" / "libgpuscope-sim-nvml.so"
LIBRARY = BUILD / "lib" / "libgpuscope.so.0"
BINARY = BUILD / "bin" / "gpuscope"


def scenario(name):
    return str(SOURCE / "scenarios" / f"{name}.json")


@pytest.fixture
def sim(monkeypatch, tmp_path):
    """The simulated GPUs of a scenario (h100x4-straggler unless the test sets another), the
    library and the binary of the build tree, every GPU visible."""
    monkeypatch.setenv("GPUSCOPE_LIBRARY", str(LIBRARY))
    monkeypatch.setenv("GPUSCOPE_BINARY", str(BINARY))
    monkeypatch.setenv("GPUSCOPE_NVML_LIBRARY", str(SIM_NVML))
    monkeypatch.setenv("GPUSCOPE_SIM_SCENARIO", scenario("h100x4-straggler"))
    monkeypatch.setenv("GPUSCOPE_SIM_STATE", str(tmp_path / "state.json"))
    monkeypatch.setenv("GPUSCOPE_SIM_EPOCH_NS", str(time.time_ns()))
    for name in ("CUDA_VISIBLE_DEVICES", "GPUSCOPE_MARK_SOCKET", "SLURM_STEP_GPUS",
                 "SLURM_JOB_GPUS", "ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path
