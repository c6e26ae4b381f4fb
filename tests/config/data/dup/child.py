_base_ = ['./a.py', './b.py']
