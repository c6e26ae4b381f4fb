"""BaseInferencer: a digits inferencer written as a downstream user would, run on a checkpoint
a real 1-epoch Runner trained, against the model's own test_step; mmengine-lite is the
oracle where the behaviour is MMEngine's (kwargs dispatch, folder listing, class checks)."""

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from mmengine.infer import BaseInferencer as MMEngineInferencer

from runnerx.config import Config
from runnerx.config.errors import ConfigKeyError
from runnerx.data import DigitsDataset, default_collate, pseudo_collate
from runnerx.device import get_device
from runnerx.infer import BaseInferencer
from runnerx.registry import MODELS, DefaultScope
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]
CONFIG = ROOT / "configs/digits_convnet.py"
NUM = 30


class DigitsInferencer(BaseInferencer):
    """Predicts the digit of 8x8 images (arrays or ``.npy`` files) and draws it on them."""

    visualize_kwargs = {"scale"}
    postprocess_kwargs = {"with_scores"}

    def _init_pipeline(self, cfg):
        def to_sample(image):
            image = np.load(image) if isinstance(image, str) else image
            inputs = torch.as_tensor(image, dtype=torch.float32).reshape(1, 8, 8)
            return dict(inputs=inputs)  # no label: DigitsConvNet predicts without one

        return to_sample

    def forward(self, inputs, **kwargs):
        batch = super().forward(inputs)  # DigitsConvNet predicts a dict of batched tensors
        return [dict(pred_score=score) for score in batch["pred_score"]]

    def visualize(self, inputs, preds, show=False, scale=4):
        images = []
        for image, pred in zip(inputs, preds, strict=True):
            image = np.load(image) if isinstance(image, str) else image
            gray = np.kron(np.asarray(image) * 255, np.ones((scale, scale)))
            self.visualizer.set_image(np.repeat(gray[..., None], 3, axis=2))
            label = str(int(pred["pred_score"].argmax()))
            self.visualizer.draw_texts(label, np.array([[1, 1]]), colors="r", font_sizes=8)
            images.append(self.visualizer.get_image())
        return images

    def postprocess(self, preds, visualization, return_datasample=False, with_scores=False):
        if not return_datasample:
            preds = [
                dict(
                    label=int(pred["pred_score"].argmax()),
                    score=float(pred["pred_score"].max()),
                    **({"scores": pred["pred_score"].tolist()} if with_scores else {}),
                )
                for pred in preds
            ]
        return dict(predictions=preds, visualization=visualization)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A Runner trained one epoch on the digits, and its checkpoint."""
    cfg = Config.fromfile(CONFIG)
    cfg.work_dir = str(tmp_path_factory.mktemp("work"))
    cfg.train_cfg = dict(by_epoch=True, max_epochs=1, val_interval=1)
    runner = Runner.from_cfg(cfg)
    runner.train()
    return runner, str(Path(cfg.work_dir) / "epoch_1.pth")


@pytest.fixture(scope="module")
def digits():
    dataset = DigitsDataset(split="val")
    return dataset.images[:NUM], dataset.labels[:NUM]


def build(weights, model=CONFIG, **kwargs):
    model = str(model) if isinstance(model, Path) else model
    return DigitsInferencer(model, weights=weights, device="cpu", **kwargs)


def arrays(images):
    return [image[0].numpy() for image in images]


def test_predictions_are_the_models_test_step_and_val_step(trained, digits):
    runner, weights = trained
    images, labels = digits
    results = build(weights)(arrays(images))
    batch = dict(inputs=images, data_samples=labels)
    with torch.no_grad():
        expected = runner.model.test_step(batch)["pred_score"]
        assert torch.equal(runner.model.val_step(batch)["pred_score"], expected)
    predictions = results["predictions"]
    assert [p["label"] for p in predictions] == expected.argmax(1).tolist()
    assert [p["score"] for p in predictions] == pytest.approx(expected.max(1).values.tolist())
    assert sum(p["label"] == y for p, y in zip(predictions, labels.tolist(), strict=True)) > NUM / 2


def test_batches_give_the_predictions_of_single_inputs(trained, digits):
    inferencer = build(trained[1])
    images = arrays(digits[0])
    chunks = list(inferencer.preprocess(images, batch_size=7))
    assert [len(chunk["inputs"]) for chunk in chunks] == [7, 7, 7, 7, 2]
    assert inferencer.collate_fn is default_collate  # the config's test_dataloader.collate_fn
    one = inferencer(images, return_datasamples=True, batch_size=1)["predictions"]
    seven = inferencer(images, return_datasamples=True, batch_size=7)["predictions"]
    torch.testing.assert_close(
        torch.stack([p["pred_score"] for p in seven]), torch.stack([p["pred_score"] for p in one])
    )
    with pytest.raises(ValueError, match="batch_size must be a positive int, got 0"):
        inferencer(images, batch_size=0)


def test_a_folder_of_npy_files_is_read_in_name_order(trained, digits, tmp_path):
    images = arrays(digits[0][:5])
    for index, image in enumerate(images):
        np.save(tmp_path / f"digit_{index}.npy", image)
    (tmp_path / "nested").mkdir()
    np.save(tmp_path / "nested" / "not_listed.npy", images[0])
    inferencer = build(trained[1])
    listed = inferencer._inputs_to_list(str(tmp_path))
    assert listed == [str(tmp_path / f"digit_{index}.npy") for index in range(5)]
    assert sorted(MMEngineInferencer._inputs_to_list(None, str(tmp_path))) == listed
    assert inferencer._inputs_to_list(images[0]) == [images[0]]
    from_files = inferencer(str(tmp_path))["predictions"]
    assert from_files == inferencer(images)["predictions"]
    assert len(inferencer(listed[0])["predictions"]) == 1


def test_return_datasamples_gives_the_model_outputs(trained, digits):
    inferencer = build(trained[1])
    images = arrays(digits[0][:4])
    samples = inferencer(images, return_datasamples=True)["predictions"]
    plain = inferencer(images, with_scores=True)["predictions"]
    assert all(isinstance(sample["pred_score"], torch.Tensor) for sample in samples)
    assert [s["pred_score"].tolist() for s in samples] == [p["scores"] for p in plain]


def test_kwargs_go_to_their_step_as_in_mmengine(trained, digits):
    inferencer = build(trained[1])
    kwargs = dict(scale=3, with_scores=True)
    assert inferencer._dispatch_kwargs(**kwargs) == MMEngineInferencer._dispatch_kwargs(
        inferencer, **kwargs
    )
    results = inferencer(arrays(digits[0][:2]), **kwargs)
    assert [image.shape for image in results["visualization"]] == [(24, 24, 3)] * 2
    assert len(results["predictions"][0]["scores"]) == 10
    with pytest.raises(ValueError) as error:
        inferencer(arrays(digits[0][:2]), scal=3)
    with pytest.raises(ValueError):  # MMEngine refuses it too
        MMEngineInferencer._dispatch_kwargs(inferencer, scal=3)
    message = str(error.value)
    assert "'scal'" in message and "did you mean 'scale'" in message
    assert "visualize: ['scale']" in message and "postprocess: ['with_scores']" in message


def test_visualize_draws_the_label_with_the_configs_visualizer(trained, digits):
    cfg = Config.fromfile(CONFIG)
    cfg.visualizer = dict(type="Visualizer", name="digits_infer_vis")
    first, second = build(trained[1], model=cfg), build(trained[1], model=cfg)
    assert first.visualizer.instance_name == "digits_infer_vis"
    assert second.visualizer.instance_name.startswith("digits_infer_vis-")
    image = arrays(digits[0][:1])
    drawn = first(image, scale=4)["visualization"][0]
    plain = np.repeat(np.kron(image[0] * 255, np.ones((4, 4)))[..., None], 3, axis=2)
    assert drawn.dtype == np.uint8 and drawn.shape == (32, 32, 3)
    red = (drawn[..., 0] > drawn[..., 1] + 60).sum()  # the label, drawn in red on gray
    assert red > 0 and not np.array_equal(drawn, plain.astype(np.uint8))


@pytest.mark.parametrize("mmengine", [False, True], ids=["runnerx", "mmengine"])
def test_the_same_argument_in_two_steps_is_refused_at_class_definition(mmengine):
    base = MMEngineInferencer if mmengine else BaseInferencer
    with pytest.raises(AssertionError) as error:
        type("Clash", (base,), dict(preprocess_kwargs={"size"}, visualize_kwargs={"size"}))
    if not mmengine:
        assert "'size' is in both preprocess_kwargs and visualize_kwargs" in str(error.value)


def test_weights_none_builds_the_model_as_configured_and_warns(digits):
    torch.manual_seed(0)
    with pytest.warns(UserWarning, match="randomly initialized model"):
        inferencer = build(None)
    torch.manual_seed(0)
    fresh = MODELS.build(Config.fromfile(CONFIG).model)
    for name, value in fresh.state_dict().items():
        assert torch.equal(inferencer.model.state_dict()[name], value), name
    assert not inferencer.model.training and inferencer.model.cfg.model.type == "DigitsConvNet"


def test_weights_alone_bring_their_config_and_dataset_meta(trained, digits):
    weights = trained[1]
    from_checkpoint = DigitsInferencer(weights=weights, device="cpu")
    assert from_checkpoint.cfg.model.type == "DigitsConvNet"
    assert from_checkpoint.model.dataset_meta == dict(classes=tuple("0123456789"))
    images = arrays(digits[0][:6])
    expected = build(weights)(images)["predictions"]
    assert from_checkpoint(images)["predictions"] == expected


def test_the_device_defaults_to_the_available_accelerator(trained):
    inferencer = DigitsInferencer(str(CONFIG), weights=trained[1])
    assert next(inferencer.model.parameters()).device.type == get_device()


def test_bad_model_and_weights_say_what_was_expected(trained, tmp_path):
    missing = str(tmp_path / "missing.pth")
    with pytest.raises(FileNotFoundError, match=f"weights='{missing}'.*checkpoint not found"):
        build(missing)
    with pytest.raises(FileNotFoundError, match="model='nope.py': no such config file"):
        build(None, model="nope.py")
    with pytest.raises(ValueError, match="give model= .* or weights="):
        DigitsInferencer()
    with pytest.raises(AssertionError, match="pass scope="):
        build(None, model="digits_convnet_1e")
    no_model = Config.fromfile(CONFIG)
    del no_model["model"]
    with pytest.raises(ConfigKeyError, match="the config has no `model`"):
        DigitsInferencer(no_model, weights=trained[1], device="cpu")
    with pytest.raises(TypeError, match="model must be a config file path"):
        DigitsInferencer(3)


def test_the_collate_function_comes_from_the_config_else_pseudo_collate(trained):
    cfg = Config.fromfile(CONFIG)
    cfg.test_dataloader.collate_fn = "pseudo_collate"
    assert build(trained[1], model=cfg).collate_fn is pseudo_collate
    del cfg["test_dataloader"]
    assert build(trained[1], model=cfg).collate_fn is pseudo_collate


@pytest.fixture(scope="module")
def zoopkg(tmp_path_factory, trained):
    """``zoopkg``: a package with its own registry scope and a model zoo that lists the
    trained checkpoint under a name and aliases."""
    site = tmp_path_factory.mktemp("site")
    root = site / "zoopkg"
    (root / ".mim" / "configs" / "digits").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "registry.py": """
            from runnerx.registry import MODELS as ROOT_MODELS, Registry
            MODELS = Registry('model', parent=ROOT_MODELS, scope='zoopkg',
                              locations=['zoopkg.models'])
        """,
        "models.py": """
            from runnerx.model.examples import DigitsConvNet
            from zoopkg.registry import MODELS

            @MODELS.register_module()
            class ZooDigitsNet(DigitsConvNet):
                pass
        """,
        ".mim/configs/digits/zoo_digits.py": f"""
            _base_ = ['{CONFIG}']
            default_scope = 'zoopkg'
            model = dict(type='ZooDigitsNet')
        """,
        ".mim/model-index.yml": "Import:\n  - configs/digits/metafile.yml\n",
        ".mim/configs/digits/metafile.yml": f"""
            Models:
              - Name: zoo_digits_1e
                Alias: [zoo-digits, ZD]
                Config: configs/digits/zoo_digits.py
                Weights: {trained[1]}
              - Name: other_net
                Alias: other
                Config: configs/digits/zoo_digits.py
                Weights: [{trained[1]}, unused.pth]
        """,
    }
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(site))
        yield
    for name in [name for name in sys.modules if name.startswith("zoopkg")]:
        del sys.modules[name]


def test_a_zoo_model_name_brings_its_config_weights_and_scope(zoopkg, trained, digits):
    images = arrays(digits[0][:6])
    expected = build(trained[1])(images)["predictions"]
    for name in ("zoo_digits_1e", "ZOO-DIGITS", "zd"):
        inferencer = DigitsInferencer(name, scope="zoopkg", device="cpu")
        assert type(inferencer.model).__name__ == "ZooDigitsNet"
        assert inferencer(images)["predictions"] == expected
    with pytest.raises(ValueError, match="did you mean 'zoo_digits_1e'"):
        DigitsInferencer("zoo_digits_2e", scope="zoopkg")
    with pytest.raises(FileNotFoundError, match="runnerx ships no trained models"):
        DigitsInferencer("zoo_digits_1e", scope="runnerx")


def test_the_configs_default_scope_is_the_scope_when_none_is_given(zoopkg, trained):
    before = DefaultScope.get_current_instance()
    assert before is None or before.scope_name != "zoopkg"
    inferencer = DigitsInferencer("zoopkg::digits/zoo_digits.py", weights=trained[1])
    assert inferencer.scope == "zoopkg" and type(inferencer.model).__name__ == "ZooDigitsNet"
    assert DefaultScope.get_current_instance() is before  # the scope is the inferencer's own


def test_list_models_lists_names_and_aliases_that_match(zoopkg):
    all_names = ["zoo_digits_1e", "zoo-digits", "ZD", "other_net", "other"]
    assert BaseInferencer.list_models("zoopkg") == all_names
    assert BaseInferencer.list_models("zoopkg", patterns="zoo") == ["zoo_digits_1e", "zoo-digits"]
    with DefaultScope.overwrite_default_scope("zoopkg"):
        assert DigitsInferencer.list_models() == all_names
    with pytest.raises(ModuleNotFoundError, match="no package 'no_such_pkg' is installed"):
        BaseInferencer.list_models("no_such_pkg")


def test_import_runnerx_does_not_import_the_inferencer():
    code = "import sys, runnerx; print('runnerx.infer' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr
