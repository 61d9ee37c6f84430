#!/usr/bin/python3
"""onnx_zoo.py — exports mlrt's ONNX test zoo with PyTorch, and records PyTorch's own outputs.

    /usr/bin/python3 tests/gen/onnx_zoo.py [OUT_DIR]      (default: tests/onnx/zoo)

Needs Debian's python3-torch (1.13) and python3-onnx (1.12); `make test` does not: the outputs are
committed. For each model NAME it writes
    NAME.onnx       the export, checked with onnx.checker (full_check: shape inference too)
    NAME.in.f32     the fixed inputs, little-endian f32, [batch][...input shape]
    NAME.out.f32    PyTorch's outputs for them (eval mode), [batch][...output shape]
and manifest.json: per model its opset, input and output shapes, batch, what it exercises, and the
tolerance mlrt must meet (max |mlrt - torch| <= atol + rtol * |torch|), plus the tool versions.

It also trains the project's digit CNN (digit-cnn) for the web demo on the MNIST split of
tools/mnist-export.mjs (build/mnist), when that is present, and records its held-out accuracy.
Everything is seeded: running it again gives the same weights on the same torch build.
"""
import json
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..', 'tests', 'onnx', 'zoo')
MNIST = os.path.join(os.path.dirname(__file__), '..', '..', 'build', 'mnist')
ATOL, RTOL = 1e-4, 1e-4


def randomize_bn(model, g):
    """Gives every BatchNorm non-trivial running statistics and affine terms (fresh ones are 0 / 1)."""
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=g) * 0.3)
            m.running_var.copy_(torch.rand(n, generator=g) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=g) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=g) * 0.2)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(64, 48), nn.Linear(48, 32), nn.Linear(32, 10)

    def forward(self, x):
        return self.fc3(torch.tanh(self.fc2(F.relu(self.fc1(x)))))


class MLPSoftmax(nn.Module):  # MatMul + Add (bias=False Linear then a parameter), Sigmoid, LogSoftmax
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 16, bias=False)
        self.b1 = nn.Parameter(torch.randn(16))
        self.fc2 = nn.Linear(16, 5)

    def forward(self, x):
        h = torch.sigmoid(x @ self.fc1.weight.t() + self.b1)
        return F.log_softmax(self.fc2(h), dim=1)


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 6, 5, padding=2)
        self.c2 = nn.Conv2d(6, 16, 5)
        self.f1, self.f2, self.f3 = nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = torch.flatten(x, 1)
        return self.f3(F.relu(self.f2(F.relu(self.f1(x)))))


class BNCNN(nn.Module):  # Conv+BN (folded by the exporter or not), BN after ReLU, Dropout, AvgPool
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.bn2 = nn.BatchNorm2d(8)
        self.drop = nn.Dropout(0.3)
        self.c2 = nn.Conv2d(8, 12, 3, stride=2, padding=1, bias=False)
        self.bn3 = nn.BatchNorm2d(12)
        self.fc = nn.Linear(12 * 4 * 4, 6)

    def forward(self, x):
        x = self.bn2(F.relu(self.bn1(self.c1(x))))
        x = F.avg_pool2d(self.drop(x), 2)
        x = F.relu(self.bn3(self.c2(x)))
        return self.fc(x.reshape(x.shape[0], -1))


class DWSep(nn.Module):  # depthwise-separable block, ReLU6 (Clip), LeakyReLU, global average pool
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.pw = nn.Conv2d(16, 24, 1)
        self.dw2 = nn.Conv2d(24, 24, 3, stride=2, padding=2, dilation=2, groups=24)
        self.g = nn.Conv2d(24, 24, 3, padding=1, groups=4)
        self.fc = nn.Linear(24, 7)

    def forward(self, x):
        x = F.relu6(self.stem(x))
        x = F.relu6(self.pw(F.relu6(self.dw(x))))
        x = F.leaky_relu(self.dw2(x), 0.1)
        x = F.leaky_relu(self.g(x), 0.01)
        x = F.adaptive_avg_pool2d(x, 1)
        return F.softmax(self.fc(torch.flatten(x, 1)), dim=1)


class Heads(nn.Module):  # Reshape head with view(-1, n), Transpose, Concat, Squeeze/Unsqueeze, Sub/Mul/Div
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(2, 4, 3)
        self.fc = nn.Linear(4 * 6 * 6 * 2, 5)
        self.scale = nn.Parameter(torch.rand(1, 4, 1, 1) + 0.5)

    def forward(self, x):
        y = self.c(x)                      # [N, 4, 6, 6]
        z = (y - 0.25) * self.scale / 2.0  # broadcasting per channel and by scalars
        t = z.transpose(2, 3)
        u = torch.cat([y, t], dim=1)       # [N, 8, 6, 6]
        v = u.unsqueeze(1).squeeze(1)
        return torch.sigmoid(self.fc(v.view(-1, 4 * 6 * 6 * 2)))


class PoolVariety(nn.Module):  # ceil_mode, count_include_pad both ways (True exports as Pad + AveragePool), pads
    def forward(self, x):
        a = F.max_pool2d(x, 3, stride=2, padding=1)
        b = F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=True)
        c = F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)
        d = F.max_pool2d(x, 2, stride=2, ceil_mode=True)
        return torch.cat([torch.flatten(a, 1), torch.flatten(b, 1), torch.flatten(c, 1), torch.flatten(d, 1)], 1)


class DigitCNN(nn.Module):  # the demo's digit model: 28x28 -> 10 logits
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.c3 = nn.Conv2d(16, 24, 3, padding=1)
        self.fc1 = nn.Linear(24 * 3 * 3, 64)
        self.fc2 = nn.Linear(64, 10)
        self.drop = nn.Dropout(0.2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.c1(x))), 2)   # 14
        x = F.max_pool2d(F.relu(self.bn2(self.c2(x))), 2)   # 7
        x = F.max_pool2d(F.relu(self.c3(x)), 2)             # 3
        x = self.drop(F.relu(self.fc1(torch.flatten(x, 1))))
        return self.fc2(x)


def load_mnist(split):
    img = np.fromfile(os.path.join(MNIST, f'{split}-images.f32'), dtype='<f4').reshape(-1, 1, 28, 28)
    lab = np.fromfile(os.path.join(MNIST, f'{split}-labels.u8'), dtype=np.uint8)
    return torch.from_numpy(img.copy()), torch.from_numpy(lab.astype(np.int64))


def train_digit_cnn(model):
    xtr, ytr = load_mnist('train')
    xte, yte = load_mnist('test')
    g = torch.Generator().manual_seed(7)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, 5, 0.3)
    model.train()
    for epoch in range(14):
        perm = torch.randperm(len(xtr), generator=g)
        for i in range(0, len(xtr), 64):
            idx = perm[i:i + 64]
            xb = xtr[idx]
            # light augmentation: shifts of up to 2 pixels, as drawn digits are not centred like MNIST
            dx, dy = torch.randint(-2, 3, (2,), generator=g).tolist()
            xb = torch.roll(xb, shifts=(dy, dx), dims=(2, 3))
            loss = F.cross_entropy(model(xb), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
    model.eval()
    with torch.no_grad():
        acc = (model(xte).argmax(1) == yte).float().mean().item()
    return acc, xte


def export(name, model, shape, batch, opset, what, dynamic=True, inputs=None, tol=None):
    path = os.path.join(OUT, name + '.onnx')
    model.eval()
    dummy = torch.zeros((1,) + shape)
    kwargs = {}
    if dynamic:
        kwargs['dynamic_axes'] = {'input': {0: 'batch'}, 'output': {0: 'batch'}}
    torch.onnx.export(model, dummy, path, opset_version=opset, input_names=['input'], output_names=['output'],
                      do_constant_folding=True, **kwargs)
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    g = torch.Generator().manual_seed(sum(map(ord, name)))
    x = inputs if inputs is not None else torch.randn((batch,) + shape, generator=g)
    if not dynamic:
        x = x[:1]
    with torch.no_grad():
        y = model(x)
    x.numpy().astype('<f4').tofile(os.path.join(OUT, name + '.in.f32'))
    y.numpy().astype('<f4').tofile(os.path.join(OUT, name + '.out.f32'))
    ops = sorted({n.op_type for n in m.graph.node})
    return {'file': name + '.onnx', 'opset': opset, 'input': list(shape), 'output': list(y.shape[1:]),
            'batch': int(x.shape[0]), 'dynamicBatch': dynamic, 'ops': ops, 'what': what,
            'atol': (tol or (ATOL, RTOL))[0], 'rtol': (tol or (ATOL, RTOL))[1], 'bytes': os.path.getsize(path)}


def main():
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1)
    zoo = []
    zoo.append(export('mlp-op13', MLP(), (64,), 5, 13, 'Gemm chain, Relu, Tanh'))
    zoo.append(export('mlp-softmax-op9', MLPSoftmax(), (20,), 4, 9, 'MatMul + Add, Sigmoid, LogSoftmax (opset 9 axis)'))
    zoo.append(export('mlp-softmax-op17', MLPSoftmax(), (20,), 4, 17, 'MatMul + Add, Sigmoid, LogSoftmax (opset 13+ axis)'))
    for op in (9, 13, 17):
        torch.manual_seed(op)
        zoo.append(export(f'lenet5-op{op}', LeNet5(), (1, 28, 28), 4, op, 'LeNet-5: Conv, MaxPool, Flatten, Gemm'))
    torch.manual_seed(3)
    bn = BNCNN()
    randomize_bn(bn, g)
    zoo.append(export('bn-cnn-op13', bn, (3, 16, 16), 3, 13, 'BatchNorm after Conv and after Relu, Dropout, AveragePool, Reshape head'))
    torch.manual_seed(4)
    zoo.append(export('dwsep-op13', DWSep(), (3, 20, 20), 3, 13, 'depthwise, grouped and dilated Conv, Clip, LeakyRelu, GlobalAveragePool, Softmax'))
    torch.manual_seed(5)
    zoo.append(export('heads-op13', Heads(), (2, 8, 8), 3, 13, 'Reshape view(-1, n), Transpose, Concat, Unsqueeze/Squeeze, Sub/Mul/Div broadcasting'))
    torch.manual_seed(6)
    zoo.append(export('heads-op9', Heads(), (2, 8, 8), 3, 9, 'the same at opset 9 (Squeeze/Unsqueeze by attribute)'))
    zoo.append(export('pools-op13', PoolVariety(), (3, 11, 11), 2, 13, 'MaxPool/AveragePool with pads, count_include_pad, ceil_mode'))
    torch.manual_seed(8)
    zoo.append(export('lenet5-static-op13', LeNet5(), (1, 28, 28), 1, 13, 'LeNet-5 exported with a fixed batch of 1', dynamic=False))
    digit = None
    if os.path.exists(os.path.join(MNIST, 'train-images.f32')):
        torch.manual_seed(11)
        cnn = DigitCNN()
        acc, xte = train_digit_cnn(cnn)
        zoo.append(export('digit-cnn', cnn, (1, 28, 28), 16, 13, 'the demo digit CNN (trained on the MNIST split)', inputs=xte[:16]))
        digit = {'heldOutAccuracy': round(acc, 4), 'testDigits': int(len(xte))}
    manifest = {'generator': 'tests/gen/onnx_zoo.py', 'torch': torch.__version__, 'onnx': onnx.__version__,
                'numpy': np.__version__, 'tolerance': 'max |mlrt - torch| <= atol + rtol * |torch|',
                'digitCnn': digit, 'models': zoo}
    with open(os.path.join(OUT, 'manifest.json'), 'w') as f:
        json.dump(manifest, f, indent=1)
        f.write('\n')
    for z in zoo:
        print(f"{z['file']:28s} {z['bytes']:7d} B  opset {z['opset']:2d}  {' '.join(z['ops'])}")
    if digit:
        print('digit-cnn held-out accuracy', digit['heldOutAccuracy'])


if __name__ == '__main__':
    main()
