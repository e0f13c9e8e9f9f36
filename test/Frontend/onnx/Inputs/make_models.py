"""Write the small ONNX models the graphfuse-import lit tests read into the folder given as argument."""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", opset)])


def _value(name, shape, elem_type=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem_type, shape)


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    weights = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3) / 8, "w")
    bias = numpy_helper.from_array(np.ones(3, np.float32), "b")
    models = {
        # Gemm with a bias, then an activation; two graph inputs, two outputs in a given order.
        "mlp.onnx": _model(
            [helper.make_node("Gemm", ["x", "w", "b"], ["h"], name="fc"),
             helper.make_node("Relu", ["h"], ["y"]),
             helper.make_node("Mul", ["y", "scale"], ["z"], name="rescale")],
            [_value("x", [2, 4]), _value("scale", [3])],
            [_value("z", [2, 3]), _value("y", [2, 3])],
            [weights, bias],
        ),
        # A convolution, pooling and a reshape to a shape computed from the static shape (folded).
        "cnn.onnx": _model(
            [helper.make_node("Conv", ["img", "k"], ["c"], name="conv", pads=[1, 1, 1, 1], strides=[1, 1]),
             helper.make_node("MaxPool", ["c"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["out"], axis=1)],
            [_value("img", [1, 2, 4, 4])],
            [_value("out", [1, 8])],
            [numpy_helper.from_array(np.full((2, 2, 3, 3), 0.1, np.float32), "k")],
        ),
        # Reshape to a shape given as a graph input: needs --bind.
        "reshape-input.onnx": _model(
            [helper.make_node("Reshape", ["x", "shape"], ["y"])],
            [_value("x", [2, 6]), _value("shape", [2], TensorProto.INT64)],
            [_value("y", [3, 4])],
        ),
        "unsupported-op.onnx": _model(
            [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("NonZero", ["r"], ["y"], name="nz")],
            [_value("x", [4])],
            [_value("y", None)],
        ),
        "unsupported-attr.onnx": _model(
            [helper.make_node("Gelu", ["x"], ["y"], name="act", approximate="fast")],
            [_value("x", [1, 6])],
            [_value("y", None)],
            opset=20,
        ),
        "unsupported-dtype.onnx": _model(
            [helper.make_node("Abs", ["x"], ["y"])], [_value("x", [4], TensorProto.DOUBLE)], [_value("y", None)]
        ),
        "dynamic.onnx": _model(
            [helper.make_node("Sigmoid", ["x"], ["y"])], [_value("x", ["batch", 8])], [_value("y", None)]
        ),
    }
    for name, model in models.items():
        onnx.save(model, str(folder / name))
    np.save(folder / "shape.npy", np.array([3, 4], np.int64))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
