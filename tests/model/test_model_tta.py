"""BaseTTAModel: one test_step per augmented view, merged per sample; compared with the
averages computed by hand and with mmengine-lite's BaseTTAModel on the same batches."""

import pytest
import torch
from torch import nn

from runnerx.data import pseudo_collate
from runnerx.model import BaseDataPreprocessor, BaseTTAModel, ImgDataPreprocessor
from runnerx.registry import MODELS
from tests.model.tta_parts import TtaAverageScores, TtaTinyClassifier, TtaVectors, features

FLIP_VIEWS = [
    [dict(type="TtaReverse", reverse=True), dict(type="TtaReverse", reverse=False)],
    [dict(type="TtaPack")],
]


def tta_batch(indices=(0, 1, 2)):
    """A batch as the DataLoader gives it: TestTimeAug views of each sample, pseudo-collated."""
    dataset = TtaVectors(pipeline=[dict(type="TestTimeAug", transforms=FLIP_VIEWS)])
    return pseudo_collate([dataset[index] for index in indices])


def by_hand(model, indices):
    """Each sample's softmax scores on its reversed and its plain features, averaged."""
    with torch.no_grad():
        return [
            (
                model.fc(features(i).flip(0)).softmax(dim=0) + model.fc(features(i)).softmax(dim=0)
            ).div(2)
            for i in indices
        ]


def mmengine_twin():
    """mmengine-lite's BaseTTAModel with the same merge_preds, recording what it is given."""
    mm_model = pytest.importorskip("mmengine.model")

    class MMAverageScores(mm_model.BaseTTAModel):
        given = []

        def merge_preds(self, data_samples_list):
            MMAverageScores.given.append(data_samples_list)
            return TtaAverageScores.merge_preds(self, data_samples_list)

    return MMAverageScores


class RecordingAverage(TtaAverageScores):
    given = []

    def merge_preds(self, data_samples_list):
        RecordingAverage.given.append(data_samples_list)
        return super().merge_preds(data_samples_list)


def assert_same_predictions(ours, theirs):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.keys() == b.keys()
        for key in a:
            if isinstance(a[key], torch.Tensor):
                assert torch.equal(a[key], b[key]), key
            else:
                assert a[key] == b[key], key


def test_merged_scores_are_the_mean_of_the_views_and_match_mmengine():
    torch.manual_seed(0)
    inner = TtaTinyClassifier().eval()
    ours = RecordingAverage(module=inner)
    theirs = mmengine_twin()(module=inner)
    batch = tta_batch((0, 1, 2))
    with torch.no_grad():
        merged = ours.test_step(batch)
        expected = theirs.test_step(batch)

    assert [sample["index"] for sample in merged] == [0, 1, 2]
    assert [sample["views"] for sample in merged] == [2, 2, 2]
    for sample, mean in zip(merged, by_hand(inner, (0, 1, 2))):
        torch.testing.assert_close(sample["pred_score"], mean)
    assert_same_predictions(merged, expected)
    # merge_preds got, per sample, its views in TestTimeAug's order: reversed first
    (given,) = RecordingAverage.given[-1:]
    assert [[view["reversed"] for view in views] for views in given] == [[True, False]] * 3
    assert [[view["index"] for view in views] for views in given] == [[0, 0], [1, 1], [2, 2]]
    assert_same_predictions(
        [v for views in given for v in views],
        [v for views in type(theirs).given[-1] for v in views],
    )


def test_a_batch_of_positional_fields_is_split_the_same_way_as_mmengine():
    torch.manual_seed(1)
    inner = TtaTinyClassifier().eval()
    batch = tta_batch((3, 4))
    fields = (batch["inputs"], batch["data_samples"])  # forward(*view) gets (inputs, samples)
    with torch.no_grad():
        merged = TtaAverageScores(module=inner).test_step(fields)
        expected = mmengine_twin()(module=inner).test_step(fields)
    assert_same_predictions(merged, expected)
    for sample, mean in zip(merged, by_hand(inner, (3, 4))):
        torch.testing.assert_close(sample["pred_score"], mean)


def test_val_step_merges_the_views_as_test_step_does():
    model = TtaAverageScores(module=TtaTinyClassifier()).eval()
    batch = tta_batch((5, 6))
    with torch.no_grad():
        assert_same_predictions(model.val_step(batch), model.test_step(batch))


def test_module_from_a_config_dict_takes_the_given_data_preprocessor():
    model = MODELS.build(
        dict(
            type="TtaAverageScores",
            module=dict(type="TtaTinyClassifier"),
            data_preprocessor=dict(type="ImgDataPreprocessor"),
        )
    )
    assert type(model.module) is TtaTinyClassifier
    assert type(model.module.data_preprocessor) is ImgDataPreprocessor
    assert type(model.data_preprocessor) is BaseDataPreprocessor  # the wrapper's own
    plain = MODELS.build(dict(type="TtaAverageScores", module=dict(type="TtaTinyClassifier")))
    assert type(plain.module.data_preprocessor) is BaseDataPreprocessor


def test_a_built_module_keeps_its_preprocessor_with_a_warning():
    inner = TtaTinyClassifier()
    with pytest.warns(UserWarning, match="data_preprocessor is ignored"):
        model = TtaAverageScores(module=inner, data_preprocessor=dict(type="ImgDataPreprocessor"))
    assert model.module is inner
    assert type(inner.data_preprocessor) is BaseDataPreprocessor


def test_bad_modules_are_named():
    with pytest.raises(TypeError, match="module must be a model config dict .* got str"):
        TtaAverageScores(module="TtaTinyClassifier")
    with pytest.raises(TypeError, match="wraps Linear, which has no test_step"):
        TtaAverageScores(module=nn.Linear(2, 2))
    with pytest.raises(TypeError, match="abstract"):
        BaseTTAModel(module=TtaTinyClassifier())


def test_forward_and_train_step_are_not_for_a_tta_model(fake_optim_wrapper):
    model = TtaAverageScores(module=TtaTinyClassifier())
    with pytest.raises(NotImplementedError, match="use test_step"):
        model(torch.zeros(1, 4))
    with pytest.raises(NotImplementedError, match="use test_step"):
        model.train_step(dict(inputs=torch.zeros(1, 4)), fake_optim_wrapper(model))


def test_bad_batches_get_clear_errors():
    model = TtaAverageScores(module=TtaTinyClassifier())
    with pytest.raises(TypeError, match="must be a dict .* got Tensor"):
        model.test_step(torch.zeros(2, 4))
    theirs = mmengine_twin()(module=TtaTinyClassifier())
    with pytest.raises(TypeError):  # mmengine-lite refuses it too
        theirs.test_step(torch.zeros(2, 4))
    batch = tta_batch((0, 1))
    batch["data_samples"] = batch["data_samples"][:1]
    with pytest.raises(ValueError, match=r"one entry per augmented view.*'inputs': 2"):
        model.test_step(batch)
    with pytest.raises(ValueError, match="no fields"):
        model.test_step({})
