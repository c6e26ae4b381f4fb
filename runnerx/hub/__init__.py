"""MMEngine's ``mmengine.hub``: the configs and models an installed package ships.

.. code-block:: python

    from runnerx.hub import get_config, get_model

    cfg = get_config('mmdet::faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py', pretrained=True)
    model = get_model('mmdet::faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py', pretrained=True)

The functions live in :mod:`runnerx.hub.hub` (MMEngine's file name), which says where a
package keeps its configs and the list of its trained weights.
"""

from .hub import get_config, get_model

__all__ = ["get_config", "get_model"]
