#!/usr/bin/python3
"""onnx_graphs.py — graphs of several inputs and outputs, int64 inputs and a varying sequence length,
built with onnx.helper and checked by onnx.checker, with their expected outputs computed here by
numpy (an implementation independent of mlrt's), for tests/c/test_graph.c.

    /usr/bin/python3 tests/gen/onnx_graphs.py [OUT_DIR]     (default: tests/onnx/graphs)

Needs Debian's python3-onnx (1.12) and numpy; `make test` does not: the outputs are committed.
For each graph NAME it writes NAME.onnx, and for each of its runs the inputs and the expected
outputs as raw little-endian arrays (NAME.K.in.I / NAME.K.out.I: float32 or int64), listed in
manifest.json with their names, element types and shapes. It also writes slow-pad.onnx: a 0.7 KB
graph whose output holds 6,311,834 floats per sample (issue 19's slow load), which mlrt must load
in time proportional to the file, not the activations.
"""
import json
import math
import os
import sys

sys.path = [p for p in sys.path if p != '']
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..', 'tests', 'onnx', 'graphs')
rng = np.random.default_rng(20261125)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def save(name, nodes, inputs, outputs, inits, opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)], producer_name='mlrt-gen-graphs')
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    with open(os.path.join(OUT, name + '.onnx'), 'wb') as f:
        f.write(m.SerializeToString())


def dump(name, k, kind, arrays):
    out = []
    for i, (n, a) in enumerate(arrays):
        a = np.ascontiguousarray(a)
        fn = f'{name}.{k}.{kind}.{i}'
        a.astype('<f4' if a.dtype == np.float32 else '<i8').tofile(os.path.join(OUT, fn))
        out.append({'name': n, 'dtype': 'F32' if a.dtype == np.float32 else 'I64', 'dims': list(a.shape), 'file': fn})
    return out


erf = np.vectorize(math.erf)


def layernorm(x, scale, bias, eps):
    mu = x.mean(axis=-1, keepdims=True, dtype=np.float64)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return ((x - mu) / np.sqrt(var + eps) * scale + bias).astype(np.float32)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


manifest = {'graphs': []}


def add(name, runs):
    manifest['graphs'].append({'file': name + '.onnx', 'runs': runs})


def two_inputs():
    """Two float inputs [batch, 4], two outputs: relu(a + b), and a @ W + c."""
    W, c = rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    nodes = [helper.make_node('Add', ['a', 'b'], ['s']), helper.make_node('Relu', ['s'], ['sum_relu']),
             helper.make_node('MatMul', ['a', 'W'], ['m']), helper.make_node('Add', ['m', 'c'], ['proj'])]
    save('two-inputs', nodes, [helper.make_tensor_value_info('a', F, ['batch', 4]), helper.make_tensor_value_info('b', F, ['batch', 4])],
         [helper.make_tensor_value_info('sum_relu', F, ['batch', 4]), helper.make_tensor_value_info('proj', F, ['batch', 3])],
         [init('W', W), init('c', c)])
    runs = []
    for k, n in enumerate([1, 3]):
        a, b = rng.standard_normal((n, 4)).astype(np.float32), rng.standard_normal((n, 4)).astype(np.float32)
        runs.append({'inputs': dump('two-inputs', k, 'in', [('a', a), ('b', b)]),
                     'outputs': dump('two-inputs', k, 'out', [('sum_relu', np.maximum(a + b, 0)),
                                                              ('proj', (a.astype(np.float64) @ W + c).astype(np.float32))])})
    add('two-inputs', runs)


def encoder():
    """input_ids and attention_mask [batch, seq] int64: an embedding Gather, the mask unsqueezed and cast
    to float, reshapes that copy dims (0), a residual Add into LayerNormalization, a GELU made of Erf,
    and three outputs: the hidden states, a softmax over a projection, and the ids reshaped (int64)."""
    V, H, FF = 20, 8, 16
    E = rng.standard_normal((V, H)).astype(np.float32)
    g, b = (1 + 0.1 * rng.standard_normal(H)).astype(np.float32), (0.1 * rng.standard_normal(H)).astype(np.float32)
    W1, b1 = (0.3 * rng.standard_normal((H, FF))).astype(np.float32), (0.1 * rng.standard_normal(FF)).astype(np.float32)
    W2, b2 = (0.3 * rng.standard_normal((FF, H))).astype(np.float32), (0.1 * rng.standard_normal(H)).astype(np.float32)
    W3 = (0.5 * rng.standard_normal((H, 3))).astype(np.float32)
    nodes = [
        helper.make_node('Gather', ['E', 'input_ids'], ['emb'], axis=0),
        helper.make_node('Reshape', ['emb', 'split'], ['emb4']), helper.make_node('Reshape', ['emb4', 'join'], ['emb3']),
        helper.make_node('Unsqueeze', ['attention_mask', 'axis2'], ['mask3']),
        helper.make_node('Cast', ['mask3'], ['maskf'], to=F),
        helper.make_node('Mul', ['emb3', 'maskf'], ['masked']),
        helper.make_node('Add', ['masked', 'emb'], ['res']),
        helper.make_node('LayerNormalization', ['res', 'g', 'b'], ['ln'], axis=-1, epsilon=1e-5),
        helper.make_node('MatMul', ['ln', 'W1'], ['f1']), helper.make_node('Add', ['f1', 'b1'], ['f1b']),
        helper.make_node('Div', ['f1b', 'sqrt2'], ['fd']), helper.make_node('Erf', ['fd'], ['fe']),
        helper.make_node('Add', ['fe', 'one'], ['fe1']), helper.make_node('Mul', ['f1b', 'fe1'], ['fm']),
        helper.make_node('Mul', ['fm', 'half'], ['gelu']),
        helper.make_node('MatMul', ['gelu', 'W2'], ['f2']), helper.make_node('Add', ['f2', 'b2'], ['hidden']),
        helper.make_node('MatMul', ['hidden', 'W3'], ['logits']), helper.make_node('Softmax', ['logits'], ['probs'], axis=-1),
        helper.make_node('Reshape', ['input_ids', 'col'], ['ids']),
    ]
    inits = [init('E', E), init('g', g), init('b', b), init('W1', W1), init('b1', b1), init('W2', W2), init('b2', b2),
             init('W3', W3), init('split', np.array([0, 0, 2, 4], np.int64)), init('join', np.array([0, 0, 8], np.int64)),
             init('axis2', np.array([2], np.int64)), init('col', np.array([0, 0, 1], np.int64)),
             init('sqrt2', np.array(math.sqrt(2), np.float32)), init('one', np.array(1, np.float32)),
             init('half', np.array(0.5, np.float32))]
    save('encoder', nodes, [helper.make_tensor_value_info('input_ids', I64, ['batch', 'sequence']),
                            helper.make_tensor_value_info('attention_mask', I64, ['batch', 'sequence'])],
         [helper.make_tensor_value_info('hidden', F, ['batch', 'sequence', H]),
          helper.make_tensor_value_info('probs', F, ['batch', 'sequence', 3]),
          helper.make_tensor_value_info('ids', I64, ['batch', 'sequence', 1])], inits)
    runs = []
    for k, (n, s) in enumerate([(2, 5), (1, 3), (3, 7), (2, 5), (1, 1)]):
        ids = rng.integers(0, V, (n, s)).astype(np.int64)
        mask = (rng.random((n, s)) < 0.7).astype(np.int64)
        emb = E[ids]
        res = emb * mask[:, :, None].astype(np.float32) + emb
        ln = layernorm(res, g, b, 1e-5).astype(np.float64)
        f1 = ln @ W1 + b1
        gelu = f1 * (1 + erf(f1 / math.sqrt(2))) * 0.5
        hidden = (gelu @ W2 + b2).astype(np.float32)
        probs = softmax(hidden.astype(np.float64) @ W3)
        runs.append({'inputs': dump('encoder', k, 'in', [('input_ids', ids), ('attention_mask', mask)]),
                     'outputs': dump('encoder', k, 'out', [('hidden', hidden), ('probs', probs), ('ids', ids[:, :, None])])})
    add('encoder', runs)


def gemm_computed_c():
    """Gemm whose C is computed (ONNX's test_operator_addmm, at opset 7: C of the second Gemm is the first's
    output), and a batch of rows with C a second graph input, beta 0.5 and transB."""
    B, c = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node('Gemm', ['A', 'B', 'c'], ['y1']), helper.make_node('Gemm', ['A', 'B', 'y1'], ['y'])]
    save('addmm', nodes, [helper.make_tensor_value_info('A', F, [2, 3])], [helper.make_tensor_value_info('y', F, [2, 4])],
         [init('B', B), init('c', c)], opset=7)
    A = rng.standard_normal((2, 3)).astype(np.float32)
    y1 = A.astype(np.float64) @ B + c
    add('addmm', [{'inputs': dump('addmm', 0, 'in', [('A', A)]),
                   'outputs': dump('addmm', 0, 'out', [('y', (A.astype(np.float64) @ B + y1).astype(np.float32))])}])
    Bt = rng.standard_normal((4, 3)).astype(np.float32)
    nodes = [helper.make_node('Gemm', ['x', 'Bt', 'cin'], ['y'], transB=1, beta=0.5)]
    save('gemm-c-input', nodes, [helper.make_tensor_value_info('x', F, ['batch', 3]), helper.make_tensor_value_info('cin', F, ['batch', 4])],
         [helper.make_tensor_value_info('y', F, ['batch', 4])], [init('Bt', Bt)], opset=13)
    runs = []
    for k, n in enumerate([1, 4]):
        x, ci = rng.standard_normal((n, 3)).astype(np.float32), rng.standard_normal((n, 4)).astype(np.float32)
        runs.append({'inputs': dump('gemm-c-input', k, 'in', [('x', x), ('cin', ci)]),
                     'outputs': dump('gemm-c-input', k, 'out', [('y', (x.astype(np.float64) @ Bt.T + 0.5 * ci).astype(np.float32))])})
    add('gemm-c-input', runs)


def slow_pad():
    """Issue 19's slow file: input [?, 3, 11, 11], a Pad of [0, 32, 1, 256, 0, 0, 1, 16129], pooling, and a
    Concat of four flattened branches: 6,311,834 output floats per sample."""
    pads = np.array([0, 32, 1, 256, 0, 0, 1, 16129], np.int64)
    nodes = [
        helper.make_node('Constant', [], ['pads'], value=numpy_helper.from_array(pads)),
        helper.make_node('Pad', ['input', 'pads'], ['padded'], mode='constant'),
        helper.make_node('AveragePool', ['padded'], ['a'], kernel_shape=[3, 3], strides=[1, 1]),
        helper.make_node('MaxPool', ['input'], ['b'], kernel_shape=[3, 3], strides=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node('AveragePool', ['input'], ['c'], kernel_shape=[3, 3], strides=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node('MaxPool', ['input'], ['d'], kernel_shape=[2, 2], strides=[3, 3]),
    ] + [helper.make_node('Flatten', [x], ['f' + x], axis=1) for x in 'abcd'] + [
        helper.make_node('Concat', ['fa', 'fb', 'fc', 'fd'], ['output'], axis=1)]
    save('slow-pad', nodes, [helper.make_tensor_value_info('input', F, ['batch', 3, 11, 11])],
         [helper.make_tensor_value_info('output', F, ['batch', 6311834])], [], opset=13)


os.makedirs(OUT, exist_ok=True)
two_inputs()
encoder()
gemm_computed_c()
slow_pad()
manifest['versions'] = {'onnx': onnx.__version__, 'numpy': np.__version__}
with open(os.path.join(OUT, 'manifest.json'), 'w') as f:
    json.dump(manifest, f, indent=1)
    f.write('\n')
