"""The framework callbacks, driven by minimal trainers that call them in each framework's
documented order (none of the frameworks is installed here): PyTorch Lightning's Callback hooks,
Hugging Face's TrainerCallback events, Keras' Callback methods. Each checks what reaches the
framework's logger."""
import sys
import time
import types

import pytest

import gpuscope
from gpuscope import callbacks


class Logger:  # Lightning's Logger.log_metrics(metrics, step)
    def __init__(self):
        self.logged = []

    def log_metrics(self, metrics, step=None):
        self.logged.append((step, dict(metrics)))


def run_lightning(callback, epochs=2, batches=3):
    """Lightning's fit loop order (lightning.pytorch's Callback docs): on_train_epoch_start,
    then per batch on_train_batch_start / on_train_batch_end, then on_train_epoch_end; on_fit_end
    last."""
    trainer = types.SimpleNamespace(logger=Logger(), global_step=0)
    module = object()
    for _ in range(epochs):
        callback.on_train_epoch_start(trainer, module)
        for batch_idx in range(batches):
            callback.on_train_batch_start(trainer, module, batch=None, batch_idx=batch_idx)
            time.sleep(0.02)
            trainer.global_step += 1
            callback.on_train_batch_end(trainer, module, outputs=None, batch=None,
                                        batch_idx=batch_idx)
        callback.on_train_epoch_end(trainer, module)
    callback.on_fit_end(trainer, module)
    return trainer.logger.logged


def test_lightning_logs_energy_per_step_and_per_epoch(sim):
    with gpuscope.Monitor(sampling_ms=50) as mon:
        logged = run_lightning(callbacks.lightning(mon))
    steps = [m for _, m in logged if "gpuscope/step_energy_j" in m]
    epochs = [(s, m) for s, m in logged if "gpuscope/epoch_energy_j" in m]
    assert len(steps) == 6 and len(epochs) == 2
    assert [s for s, _ in epochs] == [3, 6]  # at the trainer's global step
    for _, m in epochs:
        assert m["gpuscope/epoch_energy_j"] > 0 and m["gpuscope/epoch_seconds"] >= 0.06
        assert 0 <= m["gpuscope/epoch_gpu_util_pct"] <= 100
    # The steps' energy falls within the epochs' (the epochs also hold the gaps between steps).
    total_steps = sum(m["gpuscope/step_energy_j"] for m in steps)
    total_epochs = sum(m["gpuscope/epoch_energy_j"] for _, m in epochs)
    assert 0 < total_steps <= total_epochs * 1.0001


def test_lightning_callback_is_lightnings_own_class_when_lightning_is_imported(sim, monkeypatch):
    class Callback:  # what lightning.pytorch.Callback is, for isinstance
        pass
    fake = types.ModuleType("lightning.pytorch")
    fake.Callback = Callback
    monkeypatch.setitem(sys.modules, "lightning.pytorch", fake)
    with gpuscope.Monitor() as mon:
        callback = callbacks.lightning(mon)
        assert isinstance(callback, Callback)
        assert len(run_lightning(callback, epochs=1, batches=1)) == 2


def run_huggingface(callback, epochs=2, steps=4, logging_steps=2):
    """transformers.Trainer's order (TrainerCallback docs): on_train_begin; per epoch
    on_epoch_begin, per step on_step_begin, on_step_end, and every logging_steps on_log with the
    logs dict; on_epoch_end (then an on_log); on_train_end."""
    args = types.SimpleNamespace(logging_steps=logging_steps)
    state = types.SimpleNamespace(global_step=0, log_history=[])
    control = types.SimpleNamespace()
    logs_seen = []
    callback.on_init_end(args, state, control)
    callback.on_train_begin(args, state, control)
    for _ in range(epochs):
        callback.on_epoch_begin(args, state, control)
        for _ in range(steps):
            callback.on_step_begin(args, state, control)
            time.sleep(0.02)
            callback.on_optimizer_step(args, state, control)
            state.global_step += 1
            callback.on_step_end(args, state, control)
            if state.global_step % logging_steps == 0:
                logs = {"loss": 1.0}
                callback.on_log(args, state, control, logs=logs)
                logs_seen.append(logs)
        callback.on_epoch_end(args, state, control)
        logs = {"epoch": 1.0}
        callback.on_log(args, state, control, logs=logs)
        logs_seen.append(logs)
    callback.on_evaluate(args, state, control, metrics={})
    callback.on_train_end(args, state, control)
    return logs_seen


def test_huggingface_adds_energy_to_the_logs(sim):
    with gpuscope.Monitor(sampling_ms=50) as mon:
        callback = callbacks.huggingface(mon)
        logs = run_huggingface(callback)
    assert all("gpuscope/step_energy_j" in entry for entry in logs[:2])
    epoch_logs = [entry for entry in logs if "gpuscope/epoch_energy_j" in entry]
    assert len(epoch_logs) == 2 and all(e["gpuscope/epoch_energy_j"] > 0 for e in epoch_logs)
    assert [h["step"] for h in callback.history] == [4, 8]
    assert logs[0]["loss"] == 1.0  # the trainer's own entries stay


def test_keras_adds_energy_to_the_epoch_logs(sim):
    """Keras' fit order (keras.callbacks.Callback docs): set_params, set_model, on_train_begin,
    per epoch on_epoch_begin, per batch on_train_batch_begin / on_train_batch_end with a logs
    dict, on_epoch_end with the epoch's logs; on_train_end."""
    with gpuscope.Monitor(sampling_ms=50) as mon:
        cb = callbacks.keras(mon)
        cb.set_params({"epochs": 2, "steps": 2})
        cb.set_model(object())
        cb.on_train_begin(logs={})
        history = []
        for epoch in range(2):
            cb.on_epoch_begin(epoch, logs={})
            for batch in range(2):
                cb.on_train_batch_begin(batch, logs={})
                time.sleep(0.02)
                batch_logs = {"loss": 0.5}
                cb.on_train_batch_end(batch, logs=batch_logs)
                assert batch_logs["gpuscope_step_energy_j"] > 0
            epoch_logs = {"loss": 0.5}
            cb.on_epoch_end(epoch, logs=epoch_logs)
            history.append(epoch_logs)
        cb.on_test_begin(logs={})
        cb.on_train_end(logs={})
    assert all(h["gpuscope_epoch_energy_j"] > 0 for h in history)
    assert all(h["gpuscope_epoch_seconds"] >= 0.04 for h in history)


def test_without_gpus_the_callbacks_log_time_and_no_nan(sim, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.warns(RuntimeWarning):
        callback = callbacks.lightning()
    logged = run_lightning(callback, epochs=1, batches=1)
    epoch = [m for _, m in logged if "gpuscope/epoch_seconds" in m][0]
    assert "gpuscope/epoch_energy_j" not in epoch  # NaN is left out, never logged as a number


def test_job_context_reads_slurm_and_the_launchers(monkeypatch):
    env = {"SLURM_JOB_ID": "4242", "SLURM_ARRAY_JOB_ID": "4240", "SLURM_ARRAY_TASK_ID": "2",
           "SLURM_PROCID": "5", "SLURM_LOCALID": "1", "SLURM_NTASKS": "8", "RANK": "3",
           "SLURMD_NODENAME": "nid001"}
    context = gpuscope.job_context(env)
    assert context["job_id"] == 4242 and context["array_task_id"] == 2
    assert context["rank"] == 3  # torch.distributed's RANK before SLURM's
    assert context["local_rank"] == 1 and context["world_size"] == 8
    assert context["host"] == "nid001"


def test_the_examples(sim, tmp_path):
    """The plain PyTorch example runs (on the simulated GPUs, with Debian's CPU PyTorch); the
    Lightning and Hugging Face ones, whose frameworks are not installed here, compile."""
    import os
    import py_compile
    import subprocess
    from conftest import SOURCE
    examples = SOURCE / "python" / "examples"
    for name in ("lightning_train.py", "hf_trainer.py", "pytorch_loop.py"):
        py_compile.compile(str(examples / name), cfile=str(tmp_path / (name + "c")), doraise=True)
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, str(examples / "pytorch_loop.py")], capture_output=True,
                          text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(SOURCE / "python")))
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("epoch ") == 3 and "from its counter" in done.stdout, done.stdout
