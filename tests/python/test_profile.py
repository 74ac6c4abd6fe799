"""A training script measured from inside under `gpuscope profile`: its windows are phases of the
run database, their energies agree with the analysis of the same seconds, and read_run() and
analyze() give the run back in Python."""
import json
import os
import subprocess
import sys

import pytest

import gpuscope
from conftest import BINARY, SOURCE

TRAIN = r"""
import json, sys, time
import gpuscope
mon = gpuscope.Monitor(sampling_ms=100, settle=True)
results = {}
try:
    import torch
except ImportError:
    torch = None
def work(seconds):
    end = time.monotonic() + seconds
    if torch is None:
        while time.monotonic() < end:
            sum(i * i for i in range(10000))
        return
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x, y = torch.randn(256, 64), torch.randn(256, 1)
    while time.monotonic() < end:
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
time.sleep(0.5)
with mon.window("train") as w:
    work(2.5)
time.sleep(0.3)
with mon.window("eval") as e:
    work(1.5)
time.sleep(0.5)
mon.close()
json.dump({"torch": torch is not None,
           "train": [g.energy_j for g in w.gpus], "eval": [g.energy_j for g in e.gpus],
           "train_s": w.seconds, "eval_s": e.seconds}, open(sys.argv[1], "w"))
"""


@pytest.fixture
def profiled(sim):
    script = sim / "train.py"
    script.write_text(TRAIN)
    db = sim / "run.db"
    out = sim / "windows.json"
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"))
    done = subprocess.run([str(BINARY), "profile", "-q", "-s", "100", "-o", str(db), "--",
                           sys.executable, str(script), str(out)],
                          env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return db, json.loads(out.read_text())


def test_windows_are_phases_and_agree_with_the_analysis_within_one_percent(profiled):
    db, windows = profiled
    analysis = gpuscope.analyze(db)
    names = {p["name"]: p for p in analysis["phases"]["names"]}
    assert set(names) >= {"train", "eval"}
    for name in ("train", "eval"):
        phase = names[name]
        assert phase["count"] == 1 and phase["unclosed"] == 0
        assert phase["mean_time_s"] == pytest.approx(windows[f"{name}_s"], abs=0.01)
        inside = windows[name]
        assert len(inside) == len(phase["gpu_energy_j"]) == 4
        for mine, theirs in zip(inside, phase["gpu_energy_j"]):
            assert mine == pytest.approx(theirs, rel=0.01), (name, inside, phase["gpu_energy_j"])


def test_the_training_loop_was_a_real_torch_one(profiled):
    _, windows = profiled
    try:
        import torch  # noqa: F401
    except ImportError:
        pytest.skip("no PyTorch here (Debian's python3-torch)")
    assert windows["torch"]


def test_read_run_gives_the_tables_as_dataframes(profiled):
    pytest.importorskip("pandas")
    db, _ = profiled
    run = gpuscope.read_run(db)
    assert len(run.runs) == 1
    assert sorted(run.gpus["device_index"]) == [0, 1, 2, 3]
    assert (run.gpus["samples"] >= 40).all()
    assert run.gpus["mean_power_w"].between(30, 800).all()
    assert {"time", "elapsed_s", "power_w", "energy_mj"} <= set(run.samples.columns)
    assert run.samples["elapsed_s"].min() == 0
    assert set(run.phases["name"]) >= {"train", "eval"}
    assert "job_exit" in set(run.events["kind"])


def test_read_run_and_analyze_refuse_what_is_not_a_run(sim):
    bad = sim / "not-a-run.db"
    bad.write_text("hello")
    with pytest.raises(gpuscope.GpuscopeError, match="not a gpuscope run database"):
        gpuscope.read_run(bad)
    with pytest.raises(gpuscope.GpuscopeError, match="no such file"):
        gpuscope.read_run(sim / "missing.db")
    with pytest.raises(gpuscope.GpuscopeError) as e:
        gpuscope.analyze(bad)
    assert "not-a-run.db" in str(e.value)


def test_a_process_killed_inside_a_window_leaves_the_phase_unclosed_not_invented(sim):
    """SIGKILL inside a window: the library cannot end it, so the run's phase is closed at the
    end of the job and said never to have closed; nothing is made up for its end."""
    script = sim / "killed.py"
    script.write_text("import gpuscope, os, signal, time\n"
                      "mon = gpuscope.Monitor()\n"
                      "mon.begin('doomed')\n"
                      "time.sleep(0.5)\n"
                      "os.kill(os.getpid(), signal.SIGKILL)\n")
    db = sim / "killed.db"
    env = dict(os.environ, PYTHONPATH=str(SOURCE / "python"))
    done = subprocess.run([str(BINARY), "profile", "-q", "-o", str(db), "--", sys.executable,
                           str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 128 + 9, done.stderr
    names = {p["name"]: p for p in gpuscope.analyze(db)["phases"]["names"]}
    assert names["doomed"]["count"] == 1 and names["doomed"]["unclosed"] == 1


def test_pip_installs_the_package_from_the_source_tree(sim, tmp_path):
    """`pip install ./python` (offline here: the system's setuptools, no build isolation), then
    the installed copy is the one imported and it measures a window."""
    import shutil
    pytest.importorskip("pip")
    source = tmp_path / "source"
    shutil.copytree(SOURCE / "python", source)  # pip builds in the tree: keep the checkout clean
    target = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-build-isolation",
                           "--no-deps", "--target", str(target), str(source)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    probe = ("import gpuscope, sys\n"
             "with gpuscope.Monitor() as m:\n"
             "    with m.window('w') as w: pass\n"
             "print(gpuscope.__file__, len(w.gpus))\n")
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=str(target)))
    assert ran.returncode == 0, ran.stderr
    where, gpus = ran.stdout.split()
    assert where.startswith(str(target)) and gpus == "4"
