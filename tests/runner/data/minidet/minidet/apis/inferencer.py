"""MiniDetInferencer: boxes and class names for .npy files or H x W x 3 arrays."""

import os

import numpy as np

from minidet.registry import INFERENCERS
from runnerx.dataset import Compose
from runnerx.infer import BaseInferencer
from runnerx.registry import init_default_scope


@INFERENCERS.register_module()
class MiniDetInferencer(BaseInferencer):
    """``MiniDetInferencer(config, weights)(inputs, out_dir=..., pred_score_thr=...)``."""

    visualize_kwargs = {"show", "out_dir", "draw_pred", "pred_score_thr"}
    postprocess_kwargs = {"return_vis"}

    def __init__(self, model=None, weights=None, device=None, scope="minidet", **kwargs):
        init_default_scope(scope)
        super().__init__(model=model, weights=weights, device=device, scope=scope, **kwargs)

    def _load_weights_to_model(self, model, checkpoint, cfg):
        super()._load_weights_to_model(model, checkpoint, cfg)
        if checkpoint is not None:
            model.dataset_meta = checkpoint.get("meta", {}).get("dataset_meta")

    def _init_visualizer(self, cfg):
        visualizer = super()._init_visualizer(cfg)
        if visualizer is not None:
            visualizer.dataset_meta = self.model.dataset_meta
        return visualizer

    def _init_pipeline(self, cfg):
        steps = [
            step
            for step in cfg.test_dataloader.dataset.pipeline
            if step["type"] not in ("LoadNpyImage",)
        ]
        pipeline = Compose(steps)
        loader = Compose([dict(type="LoadNpyImage")])

        def run(item):
            results = dict(img_path=item) if isinstance(item, str) else dict(img=item)
            return pipeline(loader(results))

        return run

    def visualize(
        self, inputs, preds, show=False, out_dir=None, draw_pred=True, pred_score_thr=0.0
    ):
        if self.visualizer is None or (not show and out_dir is None):
            return None
        images = []
        for index, (item, pred) in enumerate(zip(inputs, preds)):
            if isinstance(item, str):
                name, image = os.path.basename(item), np.load(item)
            else:
                name, image = f"{index:04d}.npy", item
            out_file = None if out_dir is None else os.path.join(out_dir, name[:-4] + ".png")
            if out_dir is not None:
                os.makedirs(out_dir, exist_ok=True)
            images.append(
                self.visualizer.add_datasample(
                    name,
                    image,
                    pred,
                    draw_gt=False,
                    draw_pred=draw_pred,
                    show=show,
                    out_file=out_file,
                    pred_score_thr=pred_score_thr,
                )
            )
        return images

    def postprocess(self, preds, visualization, return_datasample=False, return_vis=False):
        if not return_datasample:
            classes = self.model.dataset_meta["classes"]
            preds = [
                dict(
                    bbox=p.pred_instances.bboxes[0].tolist(),
                    label=int(p.pred_instances.labels[0]),
                    class_name=classes[int(p.pred_instances.labels[0])],
                    score=float(p.pred_instances.scores[0]),
                )
                for p in preds
            ]
        result = dict(predictions=preds)
        if return_vis:
            result["visualization"] = visualization
        return result
