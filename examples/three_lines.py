#!/usr/bin/python3
"""An ordinary PyTorch training script with cloudfit's three lines in it
(marked # cloudfit). Run by hand, it trains; run by `cloudfit profile
--backend exec examples/three-lines.json`, the three lines hand the model,
loss, data and optimizer to the cloudfit_probe helper, which measures step
times, the memory ceiling and the gradient noise scale and exits.

The data is a synthetic stand-in (16×16 images whose class a fixed random
linear map picks from their 2×2-pooled colours) so that the example runs
anywhere; in your script it is your Dataset. Install the helper with
`pip install ./python` (or put python/ on PYTHONPATH, as
examples/three-lines.json does)."""
import sys

import torch
import cloudfit_probe                                                     # cloudfit

torch.manual_seed(0)  # the same initial weights in every run of a profile
x = torch.randn(8192, 3, 16, 16)
teacher = torch.randn(12, 10)
labels = (torch.nn.functional.avg_pool2d(x, 8).flatten(1) @ teacher).argmax(dim=1)
train_set = torch.utils.data.TensorDataset(x, labels)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.BatchNorm2d(64), torch.nn.ReLU(),
    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(64, 10))
device = "cuda" if torch.cuda.is_available() else "cpu"
model.to(device)
loss_fn = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

if cloudfit_probe.active():                                               # cloudfit
    sys.exit(cloudfit_probe.run(model, loss_fn, train_set, optimizer))    # cloudfit

loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True)
for epoch in range(2):
    for inputs, targets in loader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.3f}")
