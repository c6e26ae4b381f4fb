"""runnerx.hub: the configs and trained weights an installed package ships, as MMEngine's hub
reads them (a package on sys.path with .mim/configs and .mim/model-index.yml, weights served
over real HTTP)."""

import sys
import textwrap

import pytest
import torch

from runnerx.checkpoint import save_checkpoint
from runnerx.hub import get_config, get_model


@pytest.fixture
def package(tmp_path, monkeypatch, http_server):
    """``hubpkg``: a model registered in its own scope, one config and its weights' URL."""
    url, served, requests = http_server
    root = tmp_path / "site" / "hubpkg"
    (root / ".mim" / "configs" / "net").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "registry.py": """
            from runnerx.registry import MODELS as ROOT_MODELS, Registry
            MODELS = Registry('model', parent=ROOT_MODELS, scope='hubpkg',
                              locations=['hubpkg.models'])
        """,
        "models.py": """
            from torch import nn
            from hubpkg.registry import MODELS

            @MODELS.register_module()
            class HubNet(nn.Module):
                def __init__(self, width=3, extra=0):
                    super().__init__()
                    self.fc = nn.Linear(width, 2)
                    self.extra = extra
        """,
        ".mim/configs/net/hubnet_w3.py": "model = dict(type='HubNet', width=3)\n",
        ".mim/model-index.yml": "Import:\n  - configs/net/metafile.yml\n",
        ".mim/configs/net/metafile.yml": f"""
            Models:
              - Name: hubnet_w3
                Config: configs/net/hubnet_w3.py
                Weights: {url}/hubnet_w3.pth
        """,
    }
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    torch.manual_seed(0)
    weights = {"fc.weight": torch.randn(2, 3), "fc.bias": torch.randn(2)}
    save_checkpoint({"state_dict": weights}, served / "hubnet_w3.pth")
    yield url, weights, requests
    for name in [name for name in sys.modules if name.startswith("hubpkg")]:
        del sys.modules[name]


def test_get_config_reads_the_packages_config_and_its_weights_url(package):
    url, _, _ = package
    assert get_config("hubpkg::net/hubnet_w3.py").model == dict(type="HubNet", width=3)
    pretrained = get_config("hubpkg::net/hubnet_w3.py", pretrained=True)
    assert pretrained.model_path == f"{url}/hubnet_w3.pth"


def test_get_model_builds_in_the_packages_scope_and_loads_the_weights(package):
    _, weights, requests = package
    model = get_model("hubpkg::net/hubnet_w3.py", pretrained=True, extra=7)
    assert type(model).__name__ == "HubNet" and model.extra == 7
    assert torch.equal(model.fc.weight, weights["fc.weight"])
    assert model.cfg.model.type == "HubNet" and requests == ["/hubnet_w3.pth"]
    assert not torch.equal(get_model("hubpkg::net/hubnet_w3.py").fc.weight, weights["fc.weight"])


def test_bad_paths_say_what_is_expected(package):
    with pytest.raises(ValueError, match="'package::path/to/config.py'"):
        get_config("net/hubnet_w3.py")
    with pytest.raises(FileNotFoundError, match="not found"):
        get_config("hubpkg::net/missing.py")
    with pytest.raises(FileNotFoundError, match="not installed"):
        get_config("nopkg_here::net/x.py")
