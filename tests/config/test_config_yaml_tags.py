"""YAML configs are read with a safe loader that also builds the tuples MMEngine's dumps write
(``!!python/tuple``); every other Python tag is refused with the file, line and tag."""

import pytest

from runnerx import Config
from runnerx.config import ConfigError

DUMPED_BY_MMENGINE = """\
val_evaluator:
  type: Accuracy
  topk: !!python/tuple
  - 1
  - 5
model:
  backbone:
    out_indices: !!python/tuple [0, !!python/tuple [1, 2]]
  sizes:
  - !!python/tuple [3, 4]
"""


def test_a_tuple_tag_is_read_as_a_tuple_where_it_stands(tmp_path):
    path = tmp_path / "dumped.yaml"
    path.write_text(DUMPED_BY_MMENGINE)
    cfg = Config.fromfile(path)
    assert cfg.val_evaluator.topk == (1, 5)
    assert cfg.model.backbone.out_indices == (0, (1, 2))
    assert cfg.model.sizes == [(3, 4)]
    assert "topk: (1, 5)" in str(cfg.explain("val_evaluator.topk"))  # the same loader


def test_a_yaml_file_mmengine_dumped_loads_as_mmengine_reads_it(tmp_path):
    mmengine = pytest.importorskip("mmengine")
    written = dict(
        val_evaluator=dict(type="Accuracy", topk=(1, 5)),
        model=dict(backbone=dict(out_indices=(0, 1, 2, 3)), scales=[(1333, 800)]),
        classes={"cat", "dog"},
    )
    path = tmp_path / "mm.yaml"
    mmengine.Config(written).dump(str(path))
    assert "!!python/tuple" in path.read_text()
    assert Config.fromfile(path).to_dict() == mmengine.Config.fromfile(str(path)).to_dict()
    assert Config.fromfile(path).to_dict() == written


@pytest.mark.parametrize(
    "value, tag",
    [
        ("!!python/name:torch.optim.SGD ''", "!!python/name:torch.optim.SGD"),
        ("!!python/object/apply:os.remove [{marker}]", "!!python/object/apply:os.remove"),
    ],
)
def test_any_other_python_tag_is_refused_naming_file_line_and_tag(tmp_path, value, tag):
    marker = tmp_path / "marker"
    marker.write_text("still here")
    path = tmp_path / "unsafe.yaml"
    path.write_text(f"a: 1\noptimizer:\n  type: {value.format(marker=marker)}\n")
    with pytest.raises(ConfigError) as caught:
        Config.fromfile(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:3: the YAML tag {tag!r} is not allowed")
    assert "safe loader" in message and "type: torch.optim.SGD" in message
    assert marker.exists()  # nothing was run


def test_invalid_yaml_still_names_file_and_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("a: 1\nb: [1,\n")
    with pytest.raises(ConfigError, match=rf"^{path}:3: invalid YAML"):
        Config.fromfile(path)
