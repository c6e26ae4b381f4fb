_base_ = ['./does_not_exist.py']
x = 1
