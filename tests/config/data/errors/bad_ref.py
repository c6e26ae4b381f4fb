_base_ = '../delete/base.py'
m = {{_base_.model.bakbone}}
