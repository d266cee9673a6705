"""tensorflow/tensorflow#33009, "Memory leak": a trivially small Keras model whose predict()
is called in a loop, memory rising until the machine runs out (reported on TF 2.0).

The model and input are the issue's; the loop is tfbench's (one call per iteration):
    tfbench measure examples/predict_in_a_loop.py::step --releases all
    tfbench bisect examples/predict_in_a_loop.py::step --metric growth
"""

import numpy as np
from tensorflow.keras import Input, Model
from tensorflow.keras.layers import Dense

inputs = Input(shape=(10,))
outputs = Dense(2)(Dense(32)(inputs))
model = Model(inputs=inputs, outputs=outputs)
x = np.zeros((1, 10), dtype=np.float32)


def step():
    return model.predict(x, verbose=0)
