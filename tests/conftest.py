"""Shared fixtures: temporary projects, the CLI, and the real sandbox on loopback."""

from __future__ import annotations

import contextlib
import os
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, settings

from toolkit.cli import main

# Each test's kind, `make test-fast` and the suite's timings (tests/support/plugin.py);
# the tests that run without coverage's tracing (tests/support/untraced.py); logging put
# back after each test (tests/support/logging_reset.py); each xdist worker's own order of
# importing the test modules (tests/support/worker_imports.py); the xdist groups sent to
# the scheduler beside the test ids (tests/support/xdist_groups.py); the garbage
# collector's thresholds of a command that ends (tests/support/garbage_collection.py).
pytest_plugins = (
    "tests.support.plugin",
    "tests.support.untraced",
    "tests.support.logging_reset",
    "tests.support.worker_imports",
    "tests.support.xdist_groups",
    "tests.support.garbage_collection",
)

# Property tests judge their inputs, not the machine's speed: no deadline per example and
# no health check that times the generation, which a loaded machine fails at random.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


# Keep the developer's own credentials out of every test.
for _name in (
    "FOREM_API_KEY",
    "FOREM_BASE_URL",
    "CLOUDCONVERT_API_KEY",
    "CLOUDCONVERT_BASE_URL",
    "GITHUB_ACTIONS",
    # What makes the pushed commit host a post's images (`toolkit.content.hosting`).
    "GITHUB_REPOSITORY",
    "GITHUB_SHA",
    "GITHUB_SERVER_URL",
    "GITHUB_WORKSPACE",
    "LOGS_BASE_URL",
    "LOGS_USERNAME",
    "LOGS_PASSWORD",
):
    os.environ.pop(_name, None)


@dataclass
class Project:
    """A throwaway toolkit project: `toolkit.toml`, `content/`, and a CLI bound to it."""

    root: Path

    @property
    def content(self) -> Path:
        return self.root / "content"

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    def post(self, name: str, title: str, body: str = "Some text.\n", **front: object) -> Path:
        """Write `content/<name>.md` with a front matter built from `title` and `front`."""
        import yaml

        meta = {"title": title, **front}
        text = "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n" + body
        path = self.content / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def run(
        self, *args: str, env: dict[str, str] | None = None, input: str | None = None
    ) -> Result:
        """Run the real CLI in-process against this project's `toolkit.toml`, from the
        project's folder as a writer would: relative paths in arguments and in the output
        are the project's. The working folder is per process, and each pytest-xdist worker
        is a process of its own; no other thread of a test process uses relative paths."""
        with contextlib.chdir(self.root):
            return CliRunner().invoke(
                main,
                ["--config", str(self.root / "toolkit.toml"), *args],
                env=env,
                input=input,
                catch_exceptions=False,
            )


DEFAULT_CONFIG = """
[site]
title = "Test site"
url = "https://example.com/blog"
"""


@pytest.fixture
def make_project(tmp_path: Path) -> Callable[..., Project]:
    def make(config: str = DEFAULT_CONFIG, name: str = "project") -> Project:
        root = tmp_path / name
        (root / "content").mkdir(parents=True)
        (root / "toolkit.toml").write_text(textwrap.dedent(config).lstrip(), encoding="utf-8")
        return Project(root)

    return make


@pytest.fixture
def project(make_project: Callable[..., Project]) -> Project:
    return make_project()


@pytest.fixture(scope="session")
def sandbox() -> Iterator[object]:
    """The real sandbox (interface A and friends) on a free loopback port, in memory,
    with a 1-second rate-limit window so that rate-limit tests run fast."""
    from tests.support.forem_sandbox import ForemSandbox

    with ForemSandbox(db_path=None, rate_window=1.0) as server:
        yield server


REPOSITORY = Path(__file__).resolve().parents[1]


@dataclass
class DemoRun:
    """`toolkit demo` (what `make demo` runs), once, on a copy of this repository: its
    toolkit.toml, content/ (without a mirror) and the premium overlay of templates/."""

    project: Project  # the copy; the demo wrote `.toolkit/demo/` in it
    output: str  # what it printed (stdout and stderr, as `Project.run` gives them)
    exit_code: int
    before: list[str]  # the copy's files before the demo ran (relative paths)

    @property
    def workdir(self) -> Path:
        return self.project.root / ".toolkit" / "demo"


def _shared_dir(factory: pytest.TempPathFactory) -> Path:
    """A folder of this test session that every pytest-xdist worker shares."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """One demo per test session, shared by the tests that only read what it printed and
    wrote (the first worker to ask runs it; the others wait for it and read it). A test
    that changes anything runs a demo of its own."""
    import fcntl
    import json
    import shutil

    shared = _shared_dir(tmp_path_factory)
    root = shared / "shared-demo"
    done = shared / "shared-demo.json"
    with open(shared / "shared-demo.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(root, ignore_errors=True)  # a run that raised, in another worker
            root.mkdir()
            shutil.copy(REPOSITORY / "toolkit.toml", root / "toolkit.toml")
            shutil.copytree(
                REPOSITORY / "content", root / "content", ignore=shutil.ignore_patterns("_mirror")
            )
            shutil.copytree(REPOSITORY / "templates" / "premium", root / "templates" / "premium")
            before = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
            result = Project(root).run("demo")
            done.write_text(
                json.dumps(
                    {"output": result.output, "exit_code": result.exit_code, "before": before}
                ),
                encoding="utf-8",
            )
        ran = json.loads(done.read_text(encoding="utf-8"))
    return DemoRun(Project(root), ran["output"], ran["exit_code"], ran["before"])


@pytest.fixture(scope="session")
def _hostile_server() -> Iterator[object]:
    from tests.support.hostile import HostileApi
    from toolkit.serving import BackgroundServer

    api = HostileApi()
    with BackgroundServer(api.app(), name="hostile API") as server:
        api.base_url = server.base_url
        yield api


@pytest.fixture
def hostile(_hostile_server) -> Iterator[object]:
    """A publishing API on loopback that answers what the test sets (tests/support/hostile.py);
    `hostile.env` points toolkit at it."""
    _hostile_server.reset()
    yield _hostile_server
    _hostile_server.reset()
