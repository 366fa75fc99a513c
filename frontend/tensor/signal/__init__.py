"""`arignote.tensor.signal`: Theano's `theano.tensor.signal` (pooling: `signal.pool`)."""
