model = dict(
    type='Net',
    depth=18
optimizer = dict(type='SGD')
