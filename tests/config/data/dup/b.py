optim = dict(type='SGD')
shared = 2
