"""PyTorch Lightning: energy per epoch and per training step into the trainer's logger
(gpuscope/epoch_energy_j, gpuscope/step_energy_j, ... in TensorBoard, CSV, W&B...)."""
import lightning as L
import torch

import gpuscope


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(32, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.log("loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


data = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.randn(1024, 32), torch.randn(1024, 1)), batch_size=64)
trainer = L.Trainer(max_epochs=3, callbacks=[gpuscope.callbacks.lightning()],
                    logger=L.pytorch.loggers.CSVLogger("logs"))
trainer.fit(Model(), data)
