_base_ = './middle.yaml'
model = dict(layers=[4, 5])
