model = dict(type='Net', depth=18, widths=[16, 32], strides=(1, 2), head=dict(type='Head', n=10))
optim_wrapper = dict(type='OptimWrapper', optimizer=dict(type='SGD', lr=0.1, momentum=0.9))
work_dir = '/'.join(['work_dirs', 'level0'])
_private = 'kept'
__hidden = 'dropped'
scale = 4.0 ** 0.5


def helper(x):
    return x * 2


doubled = helper(21)
squares = [i * i for i in range(4)]
nested = dict(a=dict(b=dict(c=dict(d=1, e=[1, (2, 3)]))))
