"""Code generators: from tensor-level linalg IR to a target's code, each a pipeline of named passes."""
