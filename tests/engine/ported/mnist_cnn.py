"""An MNIST-style classifier with its training loop, in the style of the official
example: two convolutions, max-pooling, dropout, two linear layers, log_softmax and
nll_loss, Adadelta with a StepLR schedule."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self, channels=(8, 16), hidden=32, classes=10, side=12, p1=0.25, p2=0.5):
        super().__init__()
        self.conv1 = nn.Conv2d(1, channels[0], 3, 1)
        self.conv2 = nn.Conv2d(channels[0], channels[1], 3, 1)
        self.dropout1 = nn.Dropout(p1)
        self.dropout2 = nn.Dropout(p2)
        pooled = (side - 4) // 2
        self.fc1 = nn.Linear(channels[1] * pooled * pooled, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(model, device, train_loader, optimizer, epoch, log_interval=10):
    model.train()
    losses = []
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= sum(len(target) for _, target in test_loader)
    return test_loss, correct


def build(**sizes):
    """The model, on the CPU."""
    device = torch.device("cpu")
    return Net(**sizes).to(device)


def loader(images, labels, batch_size):
    """Batches of (images, labels) from NumPy arrays, as a DataLoader would give them."""
    data = torch.from_numpy(images)
    target = torch.from_numpy(labels).long()
    return [(data[i:i + batch_size], target[i:i + batch_size])
            for i in range(0, len(data), batch_size)]


def train_steps(model, train_loader, epochs, lr=1.0, gamma=0.7):
    """The official loop: one ``train`` per epoch, then a step of the schedule."""
    device = torch.device("cpu")
    optimizer = optim.Adadelta(model.parameters(), lr=lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=gamma)
    losses = []
    for epoch in range(1, epochs + 1):
        losses += train(model, device, train_loader, optimizer, epoch)
        scheduler.step()
    return losses
