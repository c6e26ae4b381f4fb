model = dict(type='A')
shared = 1
