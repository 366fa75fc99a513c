"""`arignote.sandbox`: Theano's `theano.sandbox` paths that Theano programs import
(`sandbox.rng_mrg.MRG_RandomStreams`)."""
