"""_graphs.py - the tensors CUDA graphs write metric values to.

A tensor metric recorded while a CUDA graph is captured is copied, inside
the graph, into a tensor of kscope's (the C extension's graphs.c); each
launch of the graph writes its value there and kscope copies it back. That
tensor must live as long as the graph does: it is held here, under the
token the GPU backend gave, and dropped once the backend reports the graph
gone (_kscope.graph_release()).
"""
held = {}  # token -> tensor
