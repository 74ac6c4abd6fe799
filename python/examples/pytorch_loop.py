"""A plain PyTorch training loop measured from inside: energy per epoch and per step.

    python pytorch_loop.py                 # the GPUs this process may use
    gpuscope profile -o run.db -- python pytorch_loop.py   # the windows become phases of run.db
"""
import statistics

import torch

import gpuscope

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
model.to(device)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = [(torch.randn(64, 512, device=device), torch.randint(0, 10, (64,), device=device))
        for _ in range(50)]

# required=False: on a machine without a GPU the loop still runs, measuring time only.
with gpuscope.Monitor(required=False) as mon:
    for epoch in range(3):
        with mon.window("epoch") as e:
            for x, y in mon.steps(data, name="step"):
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
        steps = [w for w in mon.history if w.name == "step"][-len(data):]
        print(f"epoch {epoch}: {e.seconds:.2f} s, {e.energy_j:.1f} J "
              f"({e.mean_power_w:.0f} W), median step "
              f"{statistics.median(w.energy_j for w in steps):.2f} J")
    for gpu in e.gpus:
        print(f"  GPU {gpu.index}: {gpu.energy_j:.1f} J from its {gpu.energy_source}, "
              f"SM active {gpu.sm_active_pct:.0f} %")
