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
    """docs/speed.md quotes this script; it drives the default hooks as the Runner does."""
    result = run_in_repo([sys.executable, "tools/benchmark_in_situ.py", "--rounds", "2"])
    assert result.returncode == 0, result.stderr[-5000:]
    rows = {
        line[:22].strip(): line[22:].split()
        for line in result.stdout.splitlines()[2:]
        if line.strip()
    }
    assert list(rows) == ["tight loop", "keep loss", "hook recording"]
    for alone, between, _ratio in rows.values():
        float(alone), float(between)  # both timed (numbers, not left out)


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
