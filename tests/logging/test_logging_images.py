"""Visualizer.add_image in each backend, read back with real readers (Pillow, TensorBoard's
event reader, MLflow's client), and MMEngine's LocalVisBackend as the oracle for the file."""

import io

import numpy as np
import pytest
import torch

from runnerx.logging import LocalVisBackend, TensorboardVisBackend, Visualizer

Image = pytest.importorskip("PIL.Image")


def rgb_image(height=7, width=5):
    return np.random.default_rng(0).integers(0, 256, (height, width, 3), dtype=np.uint8)


def test_local_backend_writes_the_png_mmengine_writes(tmp_path):
    vis_backend = pytest.importorskip("mmengine.visualization.vis_backend")
    image = rgb_image()
    LocalVisBackend(tmp_path / "ours").add_image("val/pred", image, step=3)
    theirs = vis_backend.LocalVisBackend(str(tmp_path / "theirs"))
    theirs.add_image("pred", image, step=3)
    ours = np.asarray(Image.open(tmp_path / "ours" / "vis_image" / "val" / "pred_3.png"))
    mm = np.asarray(Image.open(tmp_path / "theirs" / "vis_image" / "pred_3.png"))
    assert np.array_equal(ours, image) and np.array_equal(ours, mm)


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        (np.arange(12, dtype=np.uint8).reshape(3, 4), np.arange(12, dtype=np.uint8).reshape(3, 4)),
        (torch.full((2, 2, 3), 0.5), np.full((2, 2, 3), 127, np.uint8)),  # floats in [0, 1]
        (np.full((2, 3, 4), 9, np.uint8), np.full((2, 3, 4), 9, np.uint8)),  # RGBA
    ],
)
def test_grey_float_tensor_and_rgba_images(tmp_path, image, expected):
    Visualizer(vis_backends=[dict(type="LocalVisBackend")], save_dir=tmp_path).add_image("x", image)
    written = np.asarray(Image.open(tmp_path / "vis_data" / "vis_image" / "x_0.png"))
    assert np.array_equal(written, expected)


def test_a_bad_image_is_named(tmp_path):
    with pytest.raises(ValueError, match=r"add_image\('x'\).*got shape \(5, 4, 2\)") as caught:
        LocalVisBackend(tmp_path).add_image("x", np.zeros((5, 4, 2), np.uint8))
    assert "permute" not in str(caught.value)  # (5, 4, 2) is no C x H x W image either
    with pytest.raises(ValueError, match=r"C x H x W, .*: pass image\.permute\(1, 2, 0\)"):
        LocalVisBackend(tmp_path).add_image("y", np.zeros((3, 8, 8), np.uint8))


def test_tensorboard_backend_writes_an_image_summary(tmp_path):
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    image = rgb_image()
    backend = TensorboardVisBackend(tmp_path)
    backend.add_image("pred", image, step=4)
    backend.close()
    events = accumulator.EventAccumulator(str(tmp_path), size_guidance={"images": 0})
    events.Reload()
    (event,) = events.Images("pred")
    assert event.step == 4
    decoded = np.asarray(Image.open(io.BytesIO(event.encoded_image_string)))
    assert np.array_equal(decoded, image)


def test_mlflow_backend_logs_the_image_as_an_artifact(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    monkeypatch.setenv("MLFLOW_DISABLE_TELEMETRY", "true")
    from runnerx.logging import MLflowVisBackend

    store = (tmp_path / "store").as_uri()
    backend = MLflowVisBackend(tmp_path / "vis", exp_name="images", tracking_uri=store)
    image = rgb_image()
    backend.add_image("pred", image, step=2)
    run_id = backend.experiment.active_run().info.run_id
    backend.close()
    try:
        client = mlflow.MlflowClient(store)
        path = client.download_artifacts(run_id, "pred_2.png", str(tmp_path / "download"))
        assert np.array_equal(np.asarray(Image.open(path)), image)
    finally:
        while mlflow.active_run() is not None:
            mlflow.end_run()
        mlflow.set_tracking_uri(None)


def test_a_drawn_image_goes_to_tensorboard_as_drawn(tmp_path):
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    pytest.importorskip("matplotlib")
    visualizer = Visualizer(
        "images_drawn", image=rgb_image(20, 30), vis_backends=[TensorboardVisBackend(tmp_path)]
    )
    drawn = visualizer.draw_bboxes(np.array([2, 2, 20, 15]), edge_colors="r").get_image()
    visualizer.add_image("pred", drawn, step=1)
    visualizer.close()
    events = accumulator.EventAccumulator(str(tmp_path), size_guidance={"images": 0})
    events.Reload()
    (event,) = events.Images("pred")
    decoded = np.asarray(Image.open(io.BytesIO(event.encoded_image_string)))
    assert np.array_equal(decoded, drawn) and not np.array_equal(drawn, rgb_image(20, 30))
