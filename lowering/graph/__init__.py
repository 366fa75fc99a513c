"""Graph rewrites: passes on the `ag` dialect over tensors (Theano's optimizations)."""
