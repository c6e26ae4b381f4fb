"""Model-zoo checkpoint names (``torchvision://``, ``open-mmlab://``, ``mmcls://``), offline:
each file lies in torch's hub cache where the download would put it, or behind a local HTTP
server. torchvision's own enums and mmengine-lite are the oracles for names and URLs."""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import os
import sys
import urllib.error
import urllib.parse
import warnings

import pytest
import torch
from torch import nn

from runnerx.checkpoint import UnsafeCheckpointError, save_checkpoint
from runnerx.checkpoint.loader import CheckpointLoader
from runnerx.checkpoint.url_errors import CheckpointDownloadError
from runnerx.logging import logger as logger_module
from runnerx.model import BaseModule
from runnerx.runner import load_checkpoint
from runnerx.runner.checkpoint import (
    get_deprecated_model_names,
    get_external_models,
    get_mmcls_models,
    get_torchvision_models,
    load_from_mmcls,
)

#: keeps the op schemas import_torchvision defines alive for the rest of the process
_TORCHVISION_OPS: list = []


def import_torchvision():
    """torchvision, or skip where it is not installed (it is not in the tests extra).

    PyPI's torchvision wheel is built against CUDA torch: beside torch's CPU build its C++ ops
    do not load, and its import then stops at the two ops it registers fake kernels for
    unconditionally (pytorch/vision#9085). The model zoo reads only torchvision's weight
    enums (Python), so such an import gets those ops' schemas and is tried again.
    """
    if importlib.util.find_spec("torchvision") is None:
        pytest.skip("torchvision is not installed")
    try:
        import torchvision
    except RuntimeError as error:
        if "torchvision::" not in str(error):
            raise
        library = torch.library.Library("torchvision", "DEF")
        for op in ("nms", "qnms"):
            library.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _TORCHVISION_OPS.append(library)
        import torchvision
    return torchvision


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """torch's hub cache, empty, in tmp_path: its ``checkpoints`` folder."""
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    folder = tmp_path / "torch_home" / "hub" / "checkpoints"
    folder.mkdir(parents=True)
    assert torch.hub.get_dir() == str(folder.parent)
    return folder


@pytest.fixture
def home(tmp_path, monkeypatch):
    """runnerx's home (no tables in it yet); MMEngine's home is another empty folder."""
    monkeypatch.setenv("RUNNERX_HOME", str(tmp_path / "runnerx_home"))
    monkeypatch.setenv("MMENGINE_HOME", str(tmp_path / "mmengine_home"))
    (tmp_path / "runnerx_home").mkdir()
    return tmp_path / "runnerx_home"


@pytest.fixture
def warnings_logged(monkeypatch, caplog):
    """The messages runnerx warns through its current logger."""
    monkeypatch.setattr(logger_module, "_current_logger", logging.getLogger("model_zoo_test"))
    return lambda: [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def weights(seed: int) -> dict:
    torch.manual_seed(seed)
    return nn.Linear(3, 2).state_dict()


def cache(hub, url: str, checkpoint: dict) -> dict:
    """Put ``checkpoint`` where downloading ``url`` would put it."""
    save_checkpoint(checkpoint, hub / os.path.basename(urllib.parse.urlparse(url).path))
    return checkpoint


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[key], b[key]) for key in a)


class Small(BaseModule):
    def __init__(self, init_cfg=None):
        super().__init__(init_cfg)
        self.fc = nn.Linear(3, 2)


# torchvision://


def test_torchvision_names_load_the_file_of_their_enum(hub, warnings_logged):
    models = import_torchvision().models
    r18 = models.ResNet18_Weights.IMAGENET1K_V1.url
    r50_v1 = models.ResNet50_Weights.IMAGENET1K_V1.url
    r50_v2 = models.ResNet50_Weights.IMAGENET1K_V2.url
    files = {
        url: cache(hub, url, {"state_dict": weights(seed)})
        for seed, url in enumerate([r18, r50_v1, r50_v2])
    }
    for name, url in [
        ("torchvision://resnet18", r18),
        ("torchvision://resnet18.imagenet1k_v1", r18),
        ("torchvision://ResNet18_Weights.IMAGENET1K_V1", r18),
        ("torchvision://resnet50", r50_v1),  # legacy pretrained=True: IMAGENET1K_V1
        ("torchvision://resnet50.default", r50_v2),
        ("torchvision://RESNET50_WEIGHTS.imagenet1k_v2", r50_v2),
        ("modelzoo://resnet50.imagenet1k_v2", r50_v2),
    ]:
        loaded = CheckpointLoader.load_checkpoint(name, map_location="cpu")
        assert same(loaded["state_dict"], files[url]["state_dict"]), name
    assert len(warnings_logged()) == 1 and "modelzoo://" in warnings_logged()[0]


def test_pretrained_init_cfg_and_load_checkpoint_read_torchvision_names(hub):
    models = import_torchvision().models
    url = models.ResNet18_Weights.IMAGENET1K_V1.url
    pretrained = cache(hub, url, {f"fc.{key}": value for key, value in weights(1).items()})
    model = Small(init_cfg=dict(type="Pretrained", checkpoint="torchvision://resnet18"))
    model.init_weights()
    assert same(model.state_dict(), pretrained)
    other = Small()
    load_checkpoint(other, "torchvision://ResNet18_Weights.IMAGENET1K_V1")
    assert same(other.state_dict(), pretrained)


def test_torchvision_urls_are_mmengines():
    models = import_torchvision().models
    mmengine = pytest.importorskip("mmengine.runner.checkpoint")
    ours, theirs = get_torchvision_models(), mmengine.get_torchvision_models()
    names = set(models.list_models(models))
    dotted = {key: url for key, url in ours.items() if key.split(".")[0] in names and "." in key}
    assert dotted == {key: theirs.get(key) for key in dotted}
    # MMEngine's other dotted names are torchvision 0.12's (shufflenetv2_x0.5), not a model's
    legacy = {key for key in theirs if "." in key and key not in dotted}
    assert all(key.split(".")[0] not in names for key in legacy)
    # a bare name that differs is a file MMEngine took from torchvision 0.12, listed no more
    listed = set(ours.values())
    for name in names & set(theirs):
        assert theirs[name] == ours[name] or theirs[name] not in listed, name


def test_torchvision_012_names_in_mmengines_table_load_their_files(hub):
    """inception_v3_google and shufflenetv2_x1.0 (torchvision 0.12's names, in MMEngine's
    table) name the files MMEngine gives them; x1.5 and x2.0, which had none, today's."""
    models = import_torchvision().models
    mmengine = pytest.importorskip("mmengine.runner.checkpoint")
    ours, theirs = get_torchvision_models(), mmengine.get_torchvision_models()
    old = ["inception_v3_google", "shufflenetv2_x0.5", "shufflenetv2_x1.0"]
    assert {name: ours[name] for name in old} == {name: theirs[name] for name in old}
    assert ours["shufflenetv2_x1.5"] == models.ShuffleNet_V2_X1_5_Weights.IMAGENET1K_V1.url
    checkpoint = cache(hub, ours["shufflenetv2_x1.0"], weights(0))
    assert same(CheckpointLoader.load_checkpoint("torchvision://shufflenetv2_x1.0"), checkpoint)


def test_bare_torchvision_names_are_the_legacy_pretrained_weights(monkeypatch):
    """What each torchvision builder resolves ``pretrained=True`` to (caught before the model
    is built); where it has none (vit_h_14, regnet_y_128gf), the name means DEFAULT."""
    torchvision = import_torchvision()
    models = torchvision.models

    class Resolved(Exception):
        pass

    def resolved(cls, weights):
        raise Resolved(weights)

    monkeypatch.setattr(models.WeightsEnum, "verify", classmethod(resolved))
    urls = get_torchvision_models()
    for name in models.list_models(models):
        with warnings.catch_warnings(), pytest.raises((Resolved, ValueError)) as outcome:
            warnings.simplefilter("ignore")  # pretrained= is deprecated
            models.get_model_builder(name)(pretrained=True)
        legacy = outcome.value.args[0] if outcome.type is Resolved else None
        expected = legacy or models.get_model_weights(name).DEFAULT
        assert urls[name] == expected.url, name


def test_without_torchvision_the_error_says_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchvision", None)  # as if not installed
    with pytest.raises(ImportError, match=r"torchvision://resnet18 .*pip install torchvision"):
        Small(init_cfg=dict(type="Pretrained", checkpoint="torchvision://resnet18")).init_weights()


def test_unknown_torchvision_names_get_close_matches():
    import_torchvision()
    with pytest.raises(ValueError, match=r"did you mean 'torchvision://resnet50'.*get_torchvision"):
        CheckpointLoader.load_checkpoint("torchvision://resnet5O")


# open-mmlab:// and mmcls://


def test_users_table_wins_for_both_prefixes(http_server, hub, home):
    url, folder, requests = http_server
    mine = {"state_dict": weights(2)}
    save_checkpoint(mine, folder / "mine.pth")
    assert "resnet50_v1c" in get_external_models()  # mmengine's table has the name too
    (home / "open_mmlab.json").write_text(json.dumps({"resnet50_v1c": f"{url}/mine.pth"}))
    assert get_external_models()["resnet50_v1c"] == f"{url}/mine.pth"
    for name in ("open-mmlab://resnet50_v1c", "openmmlab://resnet50_v1c"):
        assert same(CheckpointLoader.load_checkpoint(name)["state_dict"], mine["state_dict"])
    assert requests == ["/mine.pth"] and (hub / "mine.pth").is_file()  # downloaded once


def test_a_zoo_name_whose_url_cannot_be_fetched_names_both(http_server, hub, home):
    url, _, _ = http_server
    (home / "open_mmlab.json").write_text(json.dumps({"gone": f"{url}/gone.pth"}))
    with pytest.raises(CheckpointDownloadError) as error:
        CheckpointLoader.load_checkpoint("open-mmlab://gone")
    assert str(error.value).startswith(f"open-mmlab://gone: downloading {url}/gone.pth failed")
    assert "HTTP 404" in str(error.value)
    assert isinstance(error.value.__cause__, urllib.error.HTTPError)


def test_mmengines_names_resolve_and_load_as_in_mmengine(hub, home):
    mmengine = pytest.importorskip("mmengine.runner.checkpoint")
    assert get_external_models() == mmengine.get_external_models()
    assert get_mmcls_models() == mmengine.get_mmcls_models()
    assert get_deprecated_model_names() == mmengine.get_deprecated_model_names()

    cache(hub, mmengine.get_external_models()["resnet50_v1c"], {"state_dict": weights(3)})
    ours = CheckpointLoader.load_checkpoint("open-mmlab://resnet50_v1c")
    assert same(
        ours["state_dict"], mmengine.load_from_openmmlab("open-mmlab://resnet50_v1c")["state_dict"]
    )

    classifier = {"backbone.conv.weight": torch.randn(2, 2), "head.fc.weight": torch.randn(3, 2)}
    cache(hub, mmengine.get_mmcls_models()["resnet18"], {"state_dict": classifier, "meta": {}})
    ours, theirs = load_from_mmcls("mmcls://resnet18"), mmengine.load_from_mmcls("mmcls://resnet18")
    assert list(ours["state_dict"]) == ["conv.weight"]
    assert ours.keys() == theirs.keys() and same(ours["state_dict"], theirs["state_dict"])


def test_deprecated_names_warn_unless_the_users_table_has_them(hub, home, warnings_logged):
    successor = get_deprecated_model_names()["resnet50_caffe"]
    pretrained = cache(hub, get_external_models()[successor], {"state_dict": weights(4)})
    loaded = CheckpointLoader.load_checkpoint("open-mmlab://resnet50_caffe")
    assert same(loaded["state_dict"], pretrained["state_dict"])
    assert warnings_logged() == [
        f"open-mmlab://resnet50_caffe is deprecated in favor of open-mmlab://{successor}"
    ]
    save_checkpoint({"state_dict": weights(5)}, home / "caffe.pth")
    (home / "open_mmlab.json").write_text(json.dumps({"resnet50_caffe": "caffe.pth"}))
    loaded = CheckpointLoader.load_checkpoint("openmmlab://resnet50_caffe")
    assert same(loaded["state_dict"], weights(5)) and len(warnings_logged()) == 1


def test_table_paths_are_read_in_the_home_folder(home, monkeypatch):
    source = Small()
    (home / "weights").mkdir()
    save_checkpoint({"state_dict": source.state_dict()}, home / "weights" / "mine.pth")
    table = {"mine": "weights/mine.pth", "gone": "weights/gone.pth"}
    (home / "open_mmlab.json").write_text(json.dumps(table))
    target = Small()
    load_checkpoint(target, "open-mmlab://mine")
    assert same(target.state_dict(), source.state_dict())
    with pytest.raises(FileNotFoundError, match=str(home / "weights" / "gone.pth")):
        CheckpointLoader.load_checkpoint("open-mmlab://gone")
    monkeypatch.setenv("RUNNERX_HOME", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home.parent))  # its runnerx/ is the home
    home.rename(home.parent / "runnerx")
    load_checkpoint(target, "open-mmlab://mine")


def test_unknown_names_and_no_tables_name_both_cures(home, monkeypatch):
    with pytest.raises(ValueError, match=r"did you mean 'open-mmlab://resnet50_v1c'"):
        CheckpointLoader.load_checkpoint("open-mmlab://resnet50_v1")
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name in ("mmengine", "mmcv") else find_spec(name, *args),
    )
    assert get_external_models() == {} and get_mmcls_models() == {}
    for name, table in [
        ("open-mmlab://resnet50_v1c", "open_mmlab.json"),
        ("mmcls://vgg11", "mmcls.json"),
    ]:
        with pytest.raises(ValueError) as error:
            CheckpointLoader.load_checkpoint(name)
        message = str(error.value)
        assert name in message and "installed mmengine or mmcv (there is none)" in message
        assert "https URL" in message and f"to {home / table}" in message
    (home / "mmcls.json").write_text("{'vgg11': 'not JSON'}")
    with pytest.raises(ValueError, match=f"{home / 'mmcls.json'} is not valid JSON"):
        CheckpointLoader.load_checkpoint("mmcls://vgg11")


def test_unsafe_load_reaches_the_model_zoo_readers(http_server, hub, home):
    url, folder, _ = http_server
    torch.save({"state_dict": weights(6), "payload": functools.partial(print)}, folder / "x.pth")
    (home / "open_mmlab.json").write_text(json.dumps({"x": f"{url}/x.pth"}))
    with pytest.raises(UnsafeCheckpointError):
        CheckpointLoader.load_checkpoint("open-mmlab://x")
    loaded = CheckpointLoader.load_checkpoint("open-mmlab://x", unsafe_load=True)
    assert same(loaded["state_dict"], weights(6))
