model = dict(type='Net', backbone=dict(type='R', depth=50), head=dict(type='H'))
runner = dict(type='EpochBasedRunner', max_epochs=12)
items = [1, 2, 3]
value = 5
