#!/usr/bin/python3
"""onnx_node_tests.py — ONNX's backend node tests for Gelu (opset 20), which Debian's libonnx-testdata
(ONNX 1.12) predates: test_gelu_default_1/2 and test_gelu_tanh_1/2, made as ONNX's own test case
(onnx/backend/test/case/node/gelu.py) makes them — the same node, inputs and numpy formulas — in the
same layout (NAME/model.onnx, NAME/test_data_set_0/input_0.pb, output_0.pb), with a seeded random input
in place of ONNX's unseeded one.

    /usr/bin/python3 tests/gen/onnx_node_tests.py [OUT_DIR]     (default: tests/onnx/node)
"""
import math
import os
import sys

sys.path = [p for p in sys.path if p != '']
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..', 'tests', 'onnx', 'node')
np.random.seed(20)


def expect(node, x, y, name):
    d = os.path.join(OUT, name)
    os.makedirs(os.path.join(d, 'test_data_set_0'), exist_ok=True)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info('x', TensorProto.FLOAT, x.shape)],
                          [helper.make_tensor_value_info('y', TensorProto.FLOAT, y.shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 20)], producer_name='backend-test')
    m.ir_version = 9  # (ONNX 1.12's checker knows no Gelu: not checked)
    with open(os.path.join(d, 'model.onnx'), 'wb') as f:
        f.write(m.SerializeToString())
    for fn, (n, a) in (('input_0.pb', ('x', x)), ('output_0.pb', ('y', y))):
        with open(os.path.join(d, 'test_data_set_0', fn), 'wb') as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


tanh = helper.make_node('Gelu', inputs=['x'], outputs=['y'], approximate='tanh')
exact = helper.make_node('Gelu', inputs=['x'], outputs=['y'])
for k, x in enumerate([np.array([-1, 0, 1]).astype(np.float32), np.random.randn(3, 4, 5).astype(np.float32)]):
    y = (0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * np.power(x, 3))))).astype(np.float32)
    expect(tanh, x, y, f'test_gelu_tanh_{k + 1}')
    y = (0.5 * x * (1 + np.vectorize(math.erf)(x / np.sqrt(2)))).astype(np.float32)
    expect(exact, x, y, f'test_gelu_default_{k + 1}')
