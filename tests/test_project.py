"""Project-level promises: the README's commands, CI, the docs' examples, a light import."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def readme_commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [block.strip() for block in blocks]


def test_ci_runs_exactly_the_readme_test_command():
    test_command = next(c for c in readme_commands() if "pytest" in c)
    ci_lines = [line.strip() for line in (ROOT / ".ci/run").read_text().splitlines()]
    assert test_command in ci_lines


def test_readme_main_job_trains_the_digits_example_to_95_percent(tmp_path, run_in_repo):
    main_job = next(c for c in readme_commands() if "tools/" in c and "pytest" not in c)
    tool_call = main_job.split("&& ")[-1]  # the set-up part is what this test suite runs in
    args = tool_call.split()
    assert args[0] == "python"
    work_dir = tmp_path / "work"
    result = run_in_repo([sys.executable, *args[1:], "--work-dir", str(work_dir)])
    assert result.returncode == 0, result.stderr[-5000:]
    (log_dir,) = [path for path in work_dir.iterdir() if path.is_dir()]
    rows = [
        json.loads(line) for line in (log_dir / "vis_data/scalars.json").read_text().splitlines()
    ]
    assert [row for row in rows if "accuracy/top1" in row][-1]["accuracy/top1"] >= 95.0


def test_import_runnerx_does_not_import_torch_or_optional_packages():
    code = (
        "import sys, runnerx; "
        "heavy = [m for m in ('torch', 'yaml', 'mmengine', 'numpy', 'tensorboard') "
        "if m in sys.modules]; print(heavy)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_benchmark_in_situ_times_each_piece_alone_and_between_steps(run_in_repo):
    """docs/speed.md quotes this script; it drives the default hooks as the Runner does, and
    times the inline contract loop part by part in both data modes."""
    args = ["tools/benchmark_in_situ.py", "--rounds", "2", "--inline-rounds", "2"]
    result = run_in_repo([sys.executable, *args])
    assert result.returncode == 0, result.stderr[-5000:]
    pieces, inline = result.stdout.split("\n\n")
    rows = {line[:22].strip(): line[22:].split() for line in pieces.splitlines()[2:]}
    assert list(rows) == ["tight loop", "keep loss", "hook recording"]
    for alone, between, _ratio in rows.values():
        float(alone), float(between)  # both timed (numbers, not left out)
    inline_rows = [
        (line[:39].strip().split(maxsplit=1), line[39:].split())
        for line in inline.splitlines()[2:-1]
    ]
    parts = ["contract", "recording", "contract + recording", "contract + recording + logging"]
    assert [label for label, _ in inline_rows] == [
        [mode, p] for mode in ("loader", "batches") for p in parts
    ]
    for _, (plain, added, overhead) in inline_rows:
        float(plain), float(added), float(overhead.rstrip("%"))


INLINE_SAME_MATH = """
import itertools, json, os, sys, tempfile
sys.path.insert(0, "tools")
import torch
from benchmarks.inline_contract import PARTS, InlineContractLoop
from benchmarks.runner_data import make_batches
from benchmarks.runner_loops import make_net
trained = []
with tempfile.TemporaryDirectory() as log_dir:
    for parts in ((), PARTS):
        torch.manual_seed(0)
        net = make_net("mlp")
        optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        batches = itertools.cycle(make_batches("mlp"))
        InlineContractLoop(net, optimizer, batches, parts, log_dir).run(120)
        trained.append([p.detach().clone() for p in net.parameters()])
    logs = {name: open(f"{log_dir}/{name}").read().splitlines() for name in os.listdir(log_dir)}
print(all(torch.equal(a, b) for a, b in zip(*trained)))
print(sorted(len(lines) for lines in logs.values()))
records = [json.loads(v[-1]) for name, v in logs.items() if name.endswith(".json") and v]
print([record["step"] for record in records], sorted(records[0]))
"""


def test_inline_contract_loop_trains_as_the_plain_loop_and_logs_every_50(run_in_repo):
    """The inline loop that bounds any Runner's overhead does the plain loop's math (equal
    weights after 120 steps) and, with logging, writes a line and a JSON record every 50."""
    result = run_in_repo([sys.executable, "-c", INLINE_SAME_MATH])
    assert result.returncode == 0, result.stderr[-5000:]
    same, line_counts, last_steps = result.stdout.splitlines()
    assert same == "True"
    assert line_counts == "[0, 0, 2, 2]"  # the plain loop logs nothing, the whole one twice
    assert last_steps == "[100] ['data_time', 'loss', 'lr', 'step', 'time']"


DOC_RUNNER = """
import sys, traceback
for index, block in enumerate(BLOCKS):
    try:
        exec(compile(block, f"{PAGE} example {index}", "exec"), {"__name__": "__main__"})
    except BaseException:
        traceback.print_exc()
        sys.exit(f"{PAGE}: example {index} failed:\\n{block}")
"""


@pytest.mark.parametrize("page", sorted((ROOT / "docs").glob("*.md")), ids=lambda p: p.name)
def test_docs_examples_run(page, tmp_path, run_in_repo):
    """Every python block of a docs page that starts with an import runs as written (one
    process per page, each block in a fresh namespace)."""
    blocks = [
        block
        for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
        if block.startswith(("from runnerx", "import"))
    ]
    if not blocks:
        pytest.skip(f"{page.name} has no runnable examples")
    script = tmp_path / "examples.py"
    script.write_text(f"BLOCKS = {blocks!r}\nPAGE = {page.name!r}\n" + DOC_RUNNER)
    result = run_in_repo([sys.executable, str(script)])
    assert result.returncode == 0, result.stderr[-5000:]
