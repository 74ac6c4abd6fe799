"""gpuscope.Monitor on the simulated GPUs: windows, the decorator, Zeus' names, steps, threads,
fork, and what happens without GPUs."""
import math
import os
import subprocess
import sys
import threading
import time

import pytest

import gpuscope
from conftest import LIBRARY, SOURCE


def test_a_window_measures_every_visible_gpu(sim):
    with gpuscope.Monitor(sampling_ms=50) as mon:
        assert mon.available and mon.gpu_count == 4
        with mon.window("train") as w:
            with pytest.raises(AttributeError, match="has not ended yet"):
                _ = w.energy_j
            time.sleep(0.5)
    assert w.name == "train"
    assert 0.45 < w.seconds < 0.9
    assert [g.index for g in w.gpus] == [0, 1, 2, 3]
    for g in w.gpus:
        assert g.energy_source == "counter"
        assert g.uuid.startswith("GPU-")
        assert 30 < g.mean_power_w < 800, g  # an H100's idle to its limit
        assert g.energy_j == pytest.approx(g.mean_power_w * w.seconds, rel=1e-9)
        assert g.samples >= 8 and not g.lost and not g.estimated
        assert not math.isnan(g.gpu_util_pct)
    assert w.energy_j == pytest.approx(sum(g.energy_j for g in w.gpus), rel=1e-12)
    assert w.energy_wh == pytest.approx(w.energy_j / 3600)
    assert mon.history[-1] is w.result


def test_cuda_visible_devices_chooses_the_gpus(sim, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,0")
    with gpuscope.Monitor() as mon:
        with mon.window("w") as w:
            pass
    assert sorted(g.index for g in w.gpus) == [0, 2]


def test_the_decorator_measures_each_call(sim):
    with gpuscope.Monitor(sampling_ms=50) as mon:
        @mon.measure("evaluate")
        def evaluate(x):
            time.sleep(0.15)
            return x * 2

        assert evaluate(21) == 42
        assert evaluate(1) == 2
        assert evaluate.last_window.name == "evaluate"
        assert evaluate.last_window.seconds >= 0.15
        assert [w.name for w in mon.history] == ["evaluate", "evaluate"]
        assert evaluate.__name__ == "evaluate"


def test_zeus_names_and_their_errors(sim):
    with gpuscope.Monitor(sampling_ms=50) as mon:
        mon.begin_window("epoch")
        with pytest.raises(gpuscope.WindowError, match="'epoch' is open already"):
            mon.begin_window("epoch")
        time.sleep(0.1)
        m = mon.end_window("epoch")
        assert m.time == m.seconds > 0.09
        assert set(m.gpu_energy) == {0, 1, 2, 3}
        assert m.total_energy == pytest.approx(sum(m.gpu_energy.values()))
        with pytest.raises(gpuscope.WindowError, match="no window named 'epoch' is open"):
            mon.end_window("epoch")
        mon.begin_window("dropped")
        assert mon.end_window("dropped", cancel=True) is None
        assert [w.name for w in mon.history] == ["epoch"]


def test_a_window_ended_twice_is_an_error(sim):
    with gpuscope.Monitor() as mon:
        wid = mon.begin("w")
        mon.end(wid)
        with pytest.raises(gpuscope.WindowError, match="ended already") as e:
            mon.end(wid)
        assert e.value.status == 4
        with pytest.raises(gpuscope.WindowError, match="no window 999"):
            mon.end(999)


def test_windows_left_open_are_said_lost_at_close(sim):
    mon = gpuscope.Monitor()
    mon.begin("never ended")
    assert mon.open_windows == 1
    with pytest.warns(RuntimeWarning, match="1 window was never ended"):
        mon.close()


def test_steps_are_windows_of_a_loop(sim):
    with gpuscope.Monitor(sampling_ms=50) as mon:
        seen = []
        for item in mon.steps(range(3), name="step"):
            time.sleep(0.05)
            seen.append(item)
        assert seen == [0, 1, 2]
        assert [w.name for w in mon.history] == ["step"] * 3
        assert mon.last_step is mon.history[-1]
        assert all(w.seconds >= 0.05 for w in mon.history)


def test_nested_windows_from_threads(sim):
    errors = []
    with gpuscope.Monitor(sampling_ms=50) as mon:
        def work():
            try:
                for _ in range(200):
                    with mon.window("outer") as outer:
                        with mon.window("inner") as inner:
                            pass
                    assert inner.seconds <= outer.seconds
            except Exception as e:  # noqa: BLE001 (collected for the assertion below)
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert mon.open_windows == 0
        assert len(mon.history) == 4 * 200 * 2


def test_a_forked_child_is_told_to_open_its_own(sim):
    mon = gpuscope.Monitor()
    pid = os.fork()
    if pid == 0:
        try:
            mon.begin("w")
            code = 1
        except gpuscope.GpuscopeError as e:
            code = 0 if e.status == 5 and "open a monitor in this process" in str(e) else 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    with mon.window("parent") as w:
        pass
    assert w.gpus
    mon.close()


def test_two_processes_measure_the_same_gpus(sim):
    script = ("import gpuscope, time\n"
              "with gpuscope.Monitor(sampling_ms=50) as m:\n"
              "    with m.window('w') as w: time.sleep(0.3)\n"
              "print(len(w.gpus), w.gpus[0].energy_source)\n")
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"))
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
        assert out.split() == ["4", "counter"]


def test_no_visible_gpu_is_an_exception_unless_told_to_go_on(sim, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(gpuscope.NoGpuError, match="no GPU this process may use"):
        gpuscope.Monitor()
    with pytest.warns(RuntimeWarning, match="measuring time only"):
        mon = gpuscope.Monitor(required=False)
    assert not mon.available and "CUDA_VISIBLE_DEVICES" in mon.reason
    with mon.window("w") as w:
        time.sleep(0.05)
    assert w.seconds >= 0.05 and math.isnan(w.energy_j) and w.gpus == ()
    mon.close()


def test_no_driver_is_a_clear_exception(sim, monkeypatch):
    monkeypatch.setenv("GPUSCOPE_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1")
    with pytest.raises(gpuscope.NoGpuError, match="/nonexistent/libnvidia-ml.so.1"):
        gpuscope.Monitor()


def test_without_the_library_the_message_says_what_to_do(sim):
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"),
               GPUSCOPE_LIBRARY="/nonexistent/libgpuscope.so.0")
    done = subprocess.run([sys.executable, "-c", "import gpuscope; gpuscope.Monitor()"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "GpuscopeError" in done.stderr and "GPUSCOPE_LIBRARY" in done.stderr, done.stderr


def test_the_library_is_the_build_trees(sim):
    assert gpuscope.library_version() == gpuscope.__version__
    assert LIBRARY.exists()
