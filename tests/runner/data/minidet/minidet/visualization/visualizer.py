"""Draws the true (green) and predicted (red) boxes with their class names."""

import numpy as np

from minidet.registry import VISUALIZERS
from runnerx.visualization import Visualizer


@VISUALIZERS.register_module()
class MiniDetVisualizer(Visualizer):
    """A ``DetLocalVisualizer``-like visualizer: ``add_datasample`` draws gt and predictions."""

    def _draw_instances(self, image, instances, color, with_score):
        self.set_image(image)
        classes = (self.dataset_meta or {}).get("classes")
        bboxes = instances.bboxes
        self.draw_bboxes(bboxes, edge_colors=color, line_widths=1)
        for box, label, score in zip(
            bboxes, instances.labels, instances.get("scores", [None] * len(bboxes))
        ):
            text = classes[int(label)] if classes else f"class {int(label)}"
            if with_score and score is not None:
                text += f" {float(score):.2f}"
            self.draw_texts(text, box[:2], colors=color, font_sizes=6)
        return self.get_image()

    def add_datasample(
        self,
        name,
        image,
        data_sample=None,
        draw_gt=True,
        draw_pred=True,
        show=False,
        wait_time=0,
        out_file=None,
        pred_score_thr=0.0,
        step=0,
    ):
        gt_img = pred_img = None
        if draw_gt and data_sample is not None and "gt_instances" in data_sample:
            gt_img = self._draw_instances(image, data_sample.gt_instances, "green", False)
        if draw_pred and data_sample is not None and "pred_instances" in data_sample:
            preds = data_sample.pred_instances
            preds = preds[preds.scores >= pred_score_thr]
            pred_img = self._draw_instances(image, preds, "red", True)
        parts = [part for part in (gt_img, pred_img) if part is not None]
        if not parts:
            parts = [image]
        drawn = np.concatenate(parts, axis=1)
        if show:
            self.show(drawn, win_name=name, wait_time=wait_time)
        if out_file is not None:
            import cv2

            cv2.imwrite(out_file, drawn[..., ::-1])
        else:
            self.add_image(name, drawn, step)
        return drawn
