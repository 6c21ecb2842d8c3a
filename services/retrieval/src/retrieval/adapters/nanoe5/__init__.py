"""The bundled local E5 model and the threads its calls run in."""
