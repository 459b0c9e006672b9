"""A PyTorch loop that waits for its input (input-bound): a
DataLoader (num_workers=0, batch_size=1) whose dataset sleeps 20 ms per
item, and a tiny training step (one 8x8 linear layer), so that most of each
step is spent in the loader's next().
"""
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset

torch.set_num_threads(1)
steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000


class Slow(Dataset):
    def __len__(self):
        return 100000

    def __getitem__(self, i):
        time.sleep(0.02)
        return torch.ones(8)


net = torch.nn.Linear(8, 8)
opt = torch.optim.SGD(net.parameters(), lr=0.01)
for step, x in enumerate(DataLoader(Slow(), batch_size=1)):
    if step >= steps:
        break
    loss = net(x).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
