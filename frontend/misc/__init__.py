"""`arignote.misc` (Theano's `theano.misc`): `pkl_utils`."""
