"""BaseModule.init_weights reaches modules inside model wrappers (as MMEngine's does) and
loads a Pretrained entry given as the PretrainedInit class last, like one named by string."""

import torch
from torch import nn

from runnerx.model import BaseModel, BaseModule
from runnerx.model.initializers import PretrainedInit


class Block(BaseModule):
    """Sets its own weights in init_weights, as user modules do."""

    def __init__(self, value):
        super().__init__()
        self.value = value
        self.linear = nn.Linear(2, 2)

    def init_weights(self):
        nn.init.constant_(self.linear.weight, self.value)
        nn.init.zeros_(self.linear.bias)
        self.is_init = True


class TwoBlocks(BaseModel):
    def __init__(self, init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        self.generator = Block(3.0)
        self.discriminator = Block(5.0)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        return self.discriminator(self.generator(inputs))


def test_init_weights_initialises_a_child_inside_a_model_wrapper():
    model = TwoBlocks()
    # a wrapper without init_weights, as the DDP that MMSeparateDistributedDataParallel puts
    # around each child (DataParallel needs no process group)
    model.generator = nn.DataParallel(model.generator)
    model.init_weights()
    assert model.generator.module.linear.weight.eq(3.0).all()
    assert model.generator.module.is_init
    assert model.discriminator.linear.weight.eq(5.0).all()


def test_a_child_wrapper_with_its_own_init_weights_is_called_itself():
    class InitialisingWrapper(nn.DataParallel):
        def init_weights(self):
            nn.init.constant_(self.module.linear.weight, -1.0)

    model = TwoBlocks()
    model.generator = InitialisingWrapper(model.generator)
    model.init_weights()
    assert model.generator.module.linear.weight.eq(-1.0).all()


def test_a_pretrained_init_class_type_is_loaded_after_the_children(tmp_path):
    source = TwoBlocks()
    nn.init.constant_(source.generator.linear.weight, 7.0)
    checkpoint = tmp_path / "two_blocks.pth"
    torch.save(source.state_dict(), checkpoint)
    model = TwoBlocks(init_cfg=dict(type=PretrainedInit, checkpoint=str(checkpoint)))
    model.init_weights()
    # the children's own init_weights ran first; the checkpoint's weights win
    assert model.generator.linear.weight.eq(7.0).all()
