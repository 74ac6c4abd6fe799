"""Energy per epoch and per step into a training framework's own logger, written to each
framework's documented callback protocol without importing the framework (docs/python.md,
"Framework callbacks"):

    trainer = lightning.Trainer(callbacks=[gpuscope.callbacks.lightning()])
    trainer = transformers.Trainer(..., callbacks=[gpuscope.callbacks.huggingface()])
    model.fit(x, y, callbacks=[gpuscope.callbacks.keras()])

Each factory returns an object of the framework's own base class when the framework is already
imported (so that isinstance checks pass), else a plain object with the same methods.
"""
import sys

from .monitor import Monitor

PREFIX = "gpuscope"


class _OtherEvents:
    """The events a protocol has beyond those a class defines (and those a later version of the
    framework adds) do nothing and return None, as the frameworks' own base classes' do."""

    def __getattr__(self, name):
        if name.startswith("on_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)


class _Meter:
    """Windows per epoch and per step over one monitor, and the figures a logger gets."""

    def __init__(self, monitor=None, steps=True):
        self.monitor = monitor if monitor is not None else Monitor(required=False)
        self.steps = steps
        self.epoch_window = None
        self.step_window = None
        self.last_epoch = None
        self.last_step = None

    def begin_epoch(self):
        self.epoch_window = self.monitor.begin("epoch")

    def end_epoch(self):
        if self.epoch_window is None:
            return None
        self.last_epoch = self.monitor.end(self.epoch_window, name="epoch")
        self.epoch_window = None
        return self.last_epoch

    def begin_step(self):
        if self.steps:
            self.step_window = self.monitor.begin("step")

    def end_step(self):
        if self.step_window is None:
            return None
        self.last_step = self.monitor.end(self.step_window, name="step")
        self.step_window = None
        return self.last_step

    @staticmethod
    def figures(result, scope, sep="/"):
        """{gpuscope/epoch_energy_j: ..., ...} for a window (NaN-free: a figure that is NaN is
        left out, as loggers choke on it)."""
        if result is None:
            return {}
        values = {f"{scope}_energy_j": result.energy_j, f"{scope}_seconds": result.seconds,
                  f"{scope}_mean_power_w": result.mean_power_w}
        util = [g.gpu_util_pct for g in result.gpus]
        sm = [g.sm_active_pct for g in result.gpus]
        if util:
            values[f"{scope}_gpu_util_pct"] = sum(util) / len(util)
        if sm:
            values[f"{scope}_sm_active_pct"] = sum(sm) / len(sm)
        return {f"{PREFIX}{sep}{k}": float(v) for k, v in values.items() if v == v}


# PyTorch Lightning -------------------------------------------------------------------------

class _LightningHooks:
    """Lightning's Callback hooks (lightning.pytorch.Callback): an epoch's and each training
    batch's energy, logged through trainer.logger.log_metrics at the trainer's global step."""

    def __init__(self, monitor=None, steps=True):
        super().__init__()  # the framework's base, when it is one
        self._gpuscope = _Meter(monitor, steps)

    @staticmethod
    def _log(trainer, metrics):
        logger = getattr(trainer, "logger", None)
        if logger is not None and metrics:
            logger.log_metrics(metrics, step=getattr(trainer, "global_step", None))

    def on_train_epoch_start(self, trainer, pl_module):
        self._gpuscope.begin_epoch()

    def on_train_epoch_end(self, trainer, pl_module):
        self._log(trainer, _Meter.figures(self._gpuscope.end_epoch(), "epoch"))

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx):
        self._gpuscope.begin_step()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self._log(trainer, _Meter.figures(self._gpuscope.end_step(), "step"))

    def on_fit_end(self, trainer, pl_module):
        self._gpuscope.end_step()
        self._gpuscope.end_epoch()


def lightning(monitor=None, steps=True):
    """A PyTorch Lightning callback (a lightning.pytorch.Callback when Lightning is imported)."""
    for module in ("lightning.pytorch", "pytorch_lightning"):
        base = getattr(sys.modules.get(module), "Callback", None)
        if base is not None:
            cls = type("GpuscopeLightningCallback", (_LightningHooks, base), {})
            return cls(monitor, steps)
    return _LightningHooks(monitor, steps)


# Hugging Face Transformers -----------------------------------------------------------------

class _HuggingFaceHooks(_OtherEvents):
    """transformers.TrainerCallback's events (args, state, control, **kwargs): each epoch's and
    step's energy added to the logs of the next `on_log` (so that the integrations after this
    callback, W&B, MLflow, TensorBoard, report it) and kept in `history`. The other events
    (on_init_end, on_evaluate, on_save, ...) do nothing."""

    def __init__(self, monitor=None, steps=True):
        super().__init__()  # the framework's base, when it is one
        self._gpuscope = _Meter(monitor, steps)
        self._pending = {}
        self.history = []

    def on_epoch_begin(self, args, state, control, **kwargs):
        self._gpuscope.begin_epoch()

    def on_epoch_end(self, args, state, control, **kwargs):
        figures = _Meter.figures(self._gpuscope.end_epoch(), "epoch")
        self._pending.update(figures)
        self.history.append(dict(figures, step=getattr(state, "global_step", None)))

    def on_step_begin(self, args, state, control, **kwargs):
        self._gpuscope.begin_step()

    def on_step_end(self, args, state, control, **kwargs):
        self._pending.update(_Meter.figures(self._gpuscope.end_step(), "step"))

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs is not None:
            logs.update(self._pending)
            self._pending = {}

    def on_train_end(self, args, state, control, **kwargs):
        self._gpuscope.end_step()
        self._gpuscope.end_epoch()



def huggingface(monitor=None, steps=True):
    """A Hugging Face Trainer callback (a transformers.TrainerCallback when Transformers is
    imported)."""
    base = getattr(sys.modules.get("transformers"), "TrainerCallback", None)
    if base is not None:
        return type("GpuscopeTrainerCallback", (_HuggingFaceHooks, base), {})(monitor, steps)
    return _HuggingFaceHooks(monitor, steps)


# Keras --------------------------------------------------------------------------------------

class _KerasHooks(_OtherEvents):
    """keras.callbacks.Callback's methods: each epoch's energy added to the epoch's `logs` (so
    History, CSVLogger and TensorBoard after this callback record it), each batch's to the
    batch's."""

    def __init__(self, monitor=None, steps=True):
        super().__init__()  # the framework's base, when it is one
        self._gpuscope = _Meter(monitor, steps)
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = params

    def on_epoch_begin(self, epoch, logs=None):
        self._gpuscope.begin_epoch()

    def on_epoch_end(self, epoch, logs=None):
        figures = _Meter.figures(self._gpuscope.end_epoch(), "epoch", sep="_")
        if logs is not None:
            logs.update(figures)

    def on_train_batch_begin(self, batch, logs=None):
        self._gpuscope.begin_step()

    def on_train_batch_end(self, batch, logs=None):
        figures = _Meter.figures(self._gpuscope.end_step(), "step", sep="_")
        if logs is not None:
            logs.update(figures)

    def on_train_end(self, logs=None):
        self._gpuscope.end_step()
        self._gpuscope.end_epoch()



def keras(monitor=None, steps=True):
    """A Keras callback (a keras.callbacks.Callback when Keras is imported)."""
    for module in ("keras", "tensorflow.keras"):
        callbacks = getattr(sys.modules.get(module), "callbacks", None)
        base = getattr(callbacks, "Callback", None)
        if base is not None:
            return type("GpuscopeKerasCallback", (_KerasHooks, base), {})(monitor, steps)
    return _KerasHooks(monitor, steps)
