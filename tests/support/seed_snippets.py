"""Every code example of the two seed documents, as runnable snippets (``torch`` is bound to
PyTorch or to autograd_lab by tests/support/dual.py). The blitz example draws random numbers, so it is
run after ``torch.manual_seed``; its printed values then depend on the generator."""

ATTRIBUTE_TABLE = '''
x = torch.tensor(1.0, requires_grad = True)
y = torch.tensor(2.0)
z = x * y
for i, name in zip([x, y, z], "xyz"):
    print(f"{name}\\ndata: {i.data}\\nrequires_grad: {i.requires_grad}\\n\\
grad: {i.grad}\\ngrad_fn: {i.grad_fn}\\nis_leaf: {i.is_leaf}\\n")
'''

CUBE = '''
x = torch.tensor(1.0, requires_grad = True)
z = x ** 3
z.backward()
print(x.grad.data)
'''

SQUARE_ONES = '''
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2
y.backward(torch.FloatTensor([1.0, 1.0]))
print(x.grad)
'''

SQUARE_W = '''
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2
w = torch.FloatTensor([1.0, 1.0])
y.backward(w)
print(x.grad)
'''

SQUARE_X_AS_GRADIENT = '''
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2
w = torch.FloatTensor([1.0, 1.0])
y.backward(x)
print(x.grad)
'''

CUBE_OF_SQUARE = '''
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = x**2
z = y**3
w = torch.FloatTensor([1.0, 1.0])
z.backward(w, retain_graph=True)
print(y.grad)
print(x.grad)
z.backward(w, retain_graph=True)
print(y.grad)
print(x.grad)
'''

TWO_LEAVES_RETAIN = '''
x = torch.tensor([2.0, 2.0], requires_grad=True)
z = torch.tensor([4.0, 4.0], requires_grad=True)
y = x**2 + z**3
w = torch.FloatTensor([1.0, 1.0])
y.backward(w, retain_graph=True)
print(x.grad)
print(z.grad)
y.backward(w, retain_graph=True)
print(x.grad)
print(z.grad)
y.backward(w, retain_graph=True)
print(x.grad)
print(z.grad)
'''

TWO_LEAVES_NO_RETAIN = '''
x = torch.tensor([2.0, 2.0], requires_grad=True)
z = torch.tensor([4.0, 4.0], requires_grad=True)
y = x**2 + z**3
w = torch.FloatTensor([1.0, 1.0])
y.backward(w)
print(x.grad)
print(z.grad)
try:
   y.backward(w)
   print(x.grad)
   print(z.grad)
except RuntimeError:
   print("Trying backward a second time when buffers are empty")
try:
    y.backward(w)
except RuntimeError:
    print("Trying backward a second time when buffers are empty")
else:
    print(x.grad)
    print(z.grad)
'''

ONE_HOT_ROWS = '''
x = Variable(torch.FloatTensor([[1, 2, 3, 4]]), requires_grad=True)
z = 2*x
loss = z.sum(dim=1)
z.backward(torch.FloatTensor([[1, 0, 0, 0]]), retain_graph=True)
print(x.grad.data)
x.grad.data.zero_()
z.backward(torch.FloatTensor([[0, 1, 0, 0]]), retain_graph=True)
print(x.grad.data)
x.grad.data.zero_()
z.backward(torch.FloatTensor([[1, 1, 1, 1]]), retain_graph=True)
print(x.grad.data)
x.grad.data.zero_()
loss.backward()
print(x.grad.data)
'''

MM_BLOG = '''
x = Variable(torch.FloatTensor([[2,1]]), requires_grad=True)
print (x)
print ('\\n')
M = Variable(torch.FloatTensor([[1,2],[3,4]]))
print (M)
print ('\\n')
y = torch.mm(x, M)
print (y)
print ('\\n')
y.backward(torch.FloatTensor([[1,0]]), retain_graph = True)
print(x.grad.data)
print('\\n')
x.grad.data.zero_()
y.backward(torch.FloatTensor([[0,1]]), retain_graph = True)
print(x.grad.data)
print('\\n')
x.grad.data.zero_()
y.backward(torch.FloatTensor([[1,1]]), retain_graph = True)
print(x.grad.data)
print ('\\n')
'''

BLITZ = '''
torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)
gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(gradients)
print(x.grad)
'''

# The blitz example again, with the starting vector fixed, so that its numbers do not depend
# on a random generator: the gradient is v * 2**k, k the number of doublings.
BLITZ_FIXED = '''
x = torch.tensor([-1.1532, 0.1908, 1.7989], requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
print(y)
gradients = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
y.backward(gradients)
print(x.grad)
'''

ALL = {name: code for name, code in globals().items() if name.isupper()}
