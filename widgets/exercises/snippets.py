'''The buggy snippets of the spot-the-error exercises, as text to copy into a cell.

Each one runs (with ``import numpy as np`` and ``import autograd_core as ag``; S4 also
with ``release_saved`` from ``widgets.lessons.memory``) and gives a wrong answer, or fails,
for the reason its exercise is about.
'''

S1 = '''\
def grads(x, y):
    """L = sum(a * b) with a = x + y and b = tanh(x). Return (dL/dx, dL/dy)."""
    a = x + y
    b = np.tanh(x)
    # the backward sweep, by hand
    a_bar = b                      # dL/da
    b_bar = a                      # dL/db
    x_bar = a_bar                  # through a = x + y
    y_bar = a_bar
    x_bar = b_bar * (1 - b**2)     # through b = tanh(x)
    return x_bar, y_bar
'''

S2 = '''\
def gradient_per_batch(w, batches):
    """The gradient of each batch's loss with respect to w, one array per batch."""
    grads = []
    for x, t in batches:
        loss = ((x @ w - t) ** 2).mean()
        loss.backward()
        grads.append(w.grad.numpy().copy())
    return grads
'''

S3 = '''\
def derivative(x, n):
    """d l_n / dx, where l_0 = x and l_(k+1) = 4 * l_k * (1 - l_k)."""
    # "I expanded the whole nested function into one formula, so I need no graph."
    # Expanded by hand for n = 2 (and nobody wants to expand n = 10):
    return 16 * (1 - 2 * x) * (1 - 8 * x + 4 * x**2)
'''

S4 = '''\
def loss_for_backward(w1, w2, x):
    """L = sum(sigmoid(tanh(x @ w1) @ w2)), ready for L.backward(), holding as little memory
    as possible until then."""
    out = ag.sigmoid(ag.tanh(x @ w1) @ w2)
    release_saved(out)        # "I keep only the output, to save memory"
    return out.sum()
'''

S5 = '''\
def grad_w(w, x, b, t):
    """dL/dw for z = w * x + b and L = 0.5 * sum((z - t)**2)."""
    z = w * x + b
    # dz/dw = x, so:
    return x
'''

S6 = '''\
def gradients(w1, w2, x):
    """dL/dw1 and dL/dw2 for L = sum(tanh(x @ w1) @ w2)."""
    loss = (ag.tanh(x @ w1) @ w2).sum()
    loss.backward(retain_graph=True)      # pass 1, for w1
    g1 = w1.grad.numpy().copy()
    w1.grad = w2.grad = None
    loss.backward()                       # pass 2, for w2
    g2 = w2.grad.numpy().copy()
    return g1, g2
'''

G10 = '''\
def embedding_backward(ids, G, num_rows):
    """dL/dW for out = W[ids], given G = dL/dout (one row per id)."""
    dW = np.zeros((num_rows, G.shape[1]))
    dW[ids] = G
    return dW
'''

G12 = '''\
def backprop(p):
    """dW2, db2 and delta1 = dL/dz1 for the MLP of G5 (p = G12.problem())."""
    delta3 = p.z3 - p.target
    delta2 = (delta3 @ p.W3) * (1 - p.a2**2)
    dW2 = p.a1.T @ delta2
    db2 = delta2.sum(axis=0)
    delta1 = (delta2 @ p.W2) * (1 - p.a2**2)
    return {"dW2": dW2, "db2": db2, "delta1": delta1}
'''
