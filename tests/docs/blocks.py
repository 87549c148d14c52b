"""The code blocks of README.md and docs/**/*.md, and how each kind runs.

A page's blocks run in order, as a reader would run them: ``python`` blocks in one namespace,
``bash`` blocks through ``bash`` with this checkout's ``lance-semantic`` first on the path,
in the same working directory. ``text`` blocks (output, synopses) are the only ones not run.
A shell command that installs, builds or starts a long-running program is not run but held
to the repository instead (``NOT_RUN``); one that ``weed mini`` starts an S3 server in the
background, on free loopback ports (the page's later blocks see the ports it got).

The vendored references (``docs/spec``, ``docs/format``) are kept byte for byte as written
and are not pages whose blocks run.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: vendored byte for byte (docs/spec holds a .txt, no page)
VENDORED = ("docs/format/lance-format-facts.md", "docs/format/index-formats.md")
LANGUAGES = ("python", "bash", "text")

_OPEN = re.compile(r"^(?P<indent>[ \t]*)```(?P<info>[^`\s]*)[ \t]*$")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repository root
    line: int  # of the opening fence, 1-based
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[str]:
    """README.md and every page of the site but the vendored references."""
    found = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))
    return ["README.md", *(p for p in found if p not in VENDORED)]


def blocks(page: str) -> list[Block]:
    """The fenced blocks of ``page``, indented ones (inside list items) dedented."""
    lines = (ROOT / page).read_text(encoding="utf-8").split("\n")
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _OPEN.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, start = m.group("indent"), i
        body: list[str] = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            i += 1
        if i == len(lines):
            raise AssertionError(f"{page}:{start + 1}: the block is never closed")
        out.append(Block(page, start + 1, m.group("info"), "\n".join(body) + "\n"))
        i += 1
    return out


# ---- shell commands ---------------------------------------------------------------------------


def shell_commands(text: str) -> Iterator[str]:
    """The commands of a bash block: continuation lines joined, a here-document kept with
    its command, ``a && b`` split in two, blank and comment lines left out."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        while line.endswith("\\") and i + 1 < len(lines):
            i += 1
            line = line[:-1] + " " + lines[i].strip()
        i += 1
        heredoc = re.search(r"<<-?\s*'?(\w+)'?", line)
        if heredoc:
            end = heredoc.group(1)
            while i < len(lines) and lines[i].strip() != end:
                line += "\n" + lines[i]
                i += 1
            line += "\n" + end
            i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        yield from (part.strip() for part in re.split(r"\s&&\s", line) if part.strip())


def words(command: str) -> list[str]:
    return shlex.split(command.split("\n", 1)[0], comments=True)


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _check_pip(args: list[str]) -> None:
    extras = _pyproject()["project"]["optional-dependencies"]
    for arg in args:
        if arg.startswith("-"):
            continue
        if arg.startswith(".["):
            wanted = arg[2:-1].split(",")
            assert all(e in extras for e in wanted), f"no extra {arg} in pyproject.toml"
        elif arg != ".":
            assert any(arg == req for reqs in extras.values() for req in reqs), (
                f"{arg} is not a requirement pyproject.toml pins"
            )


def _check_pytest(args: list[str]) -> None:
    paths = [a.split("::")[0] for a in args if not a.startswith("-")]
    if not args:
        ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
        assert ci[-1] == "python -m pytest", ".ci/run no longer runs the README's test command"
    for path in paths:
        assert (ROOT / path).exists(), f"{path} does not exist"


def _check_script(args: list[str]) -> None:
    script = ROOT / args[0]
    assert script.is_file(), f"{args[0]} does not exist"
    source = script.read_text(encoding="utf-8")
    if "add_common_args" in source:
        source += (ROOT / "benchmarks" / "_harness.py").read_text(encoding="utf-8")
    for arg in args[1:]:
        if arg.startswith("--"):
            option = arg.split("=", 1)[0]
            assert f'"{option}"' in source, f"{args[0]} takes no {option}"


def _check_uv(args: list[str]) -> None:
    assert (ROOT / "uv.lock").is_file(), "uv.lock is not committed"
    if "--extra" in args:
        extra = args[args.index("--extra") + 1]
        assert extra in _pyproject()["project"]["optional-dependencies"], f"no extra {extra}"


def _check_mkdocs(args: list[str]) -> None:
    assert (ROOT / "mkdocs.yml").is_file()
    assert args[0] in ("build", "serve"), args  # the build is run by tests/docs/test_site.py


def not_run(argv: list[str]) -> Callable[[], None] | None:
    """The check that stands in for running ``argv``, or None when it runs."""
    match argv:
        case ["pip", "install", *rest]:
            return lambda: _check_pip(rest)
        case ["python", "-m", "pytest", *rest] | ["uv", "run", "pytest", *rest]:
            return lambda: _check_pytest(rest)
        case ["uv", *rest]:
            return lambda: _check_uv(rest)
        case ["python", script, *_] if script.startswith(("benchmarks/", "scripts/")):
            return lambda: _check_script(argv[1:])
        case ["mkdocs", *rest]:
            return lambda: _check_mkdocs(rest)
    if argv and argv[0] in ("pip", "uv", "python", "python3", "mkdocs"):
        raise AssertionError(f"{shlex.join(argv)}: neither runnable here nor checked")
    return None


# ---- running a page ---------------------------------------------------------------------------


@dataclass
class PageRun:
    """One page's run: its namespace, the values of its expression statements, the servers
    it started, and the text replacements those servers imply for the later blocks."""

    cwd: Path
    namespace: dict[str, Any] = field(default_factory=dict)
    values: list[tuple[str, Any]] = field(default_factory=list)
    replace: dict[str, str] = field(default_factory=dict)
    servers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        env["PYTHONPATH"] = os.pathsep.join(
            [str(ROOT / "src"), *filter(None, [env.get("PYTHONPATH")])]
        )
        env["TMPDIR"] = str(self.cwd)
        return env

    def text(self, block: Block) -> str:
        text = block.text
        for old, new in self.replace.items():
            text = text.replace(old, new)
        return text

    def starts_a_server(self, block: Block) -> bool:
        return block.lang == "bash" and any(
            words(c)[:2] == ["weed", "mini"] for c in shell_commands(block.text)
        )

    def again(self, block: Block) -> bool:
        """Whether a second run of ``block`` could fail where the first passed: not for a
        server (a reader starts it once) nor for a bash block that starts with
        ``cd "$(mktemp -d)"``, which runs in a new empty folder every time."""
        if self.starts_a_server(block):
            return False
        first = next(shell_commands(block.text), "") if block.lang == "bash" else ""
        return first != 'cd "$(mktemp -d)"'

    def run(self, block: Block) -> None:
        if block.lang == "python":
            self.run_python(block)
        elif block.lang == "bash":
            self.run_bash(block)
        else:
            assert block.lang == "text", f"{block.where}: untagged or unknown block"

    def run_python(self, block: Block) -> None:
        """Statement by statement, so that each expression statement's value is kept."""
        tree = ast.parse(self.text(block), block.where)
        for node in tree.body:
            if isinstance(node, ast.Expr):
                code = compile(ast.Expression(node.value), block.where, "eval")
                self.values.append(
                    (f"{block.page}:{block.line + node.lineno}", eval(code, self.namespace))
                )
            else:
                exec(compile(ast.Module([node], []), block.where, "exec"), self.namespace)

    def run_bash(self, block: Block) -> None:
        script: list[str] = []
        for command in shell_commands(self.text(block)):
            argv = words(command)
            if argv[:2] == ["weed", "mini"]:
                self.start_weed(script, command)
                return
            check = not_run(argv)
            if check is not None:
                check()
            else:
                script.append(command)
        if script:
            done = subprocess.run(
                ["bash", "-e", "-o", "pipefail", "-c", "\n".join(script)],
                cwd=self.cwd,
                env=self.env(),
                capture_output=True,
                timeout=120,
            )
            assert done.returncode == 0, (
                f"{block.where} exited {done.returncode}:\n"
                f"{done.stdout.decode(errors='replace')}\n{done.stderr.decode(errors='replace')}"
            )

    def start_weed(self, setup: list[str], command: str) -> None:
        """Run the block's setup and its ``weed mini`` in the background, each ``-X.port=N``
        moved to a free port, and wait until the server stores objects in its bucket."""
        from tests.s3.seaweed import _free_ports

        ports = re.findall(r"-(\w+)\.port=(\d+)", command)
        for (name, old), new in zip(ports, _free_ports(len(ports)), strict=True):
            command = command.replace(f"-{name}.port={old}", f"-{name}.port={new}")
            self.replace[f"127.0.0.1:{old}"] = f"127.0.0.1:{new}"
        script = "\n".join([*setup, "exec " + command])
        log = open(self.cwd / "weed.log", "wb")  # noqa: SIM115 -- closed with the process
        process = subprocess.Popen(
            ["bash", "-e", "-c", script],
            cwd=self.cwd,
            env=self.env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        self.servers.append(process)
        s3 = dict(ports)["s3"]
        endpoint = f"http://{self.replace[f'127.0.0.1:{s3}']}"
        self._wait_for_bucket(process, endpoint, re.search(r"-bucket=(\S+)", command))

    def _wait_for_bucket(
        self, process: subprocess.Popen[bytes], endpoint: str, bucket: re.Match[str] | None
    ) -> None:
        import obstore
        from obstore.store import S3Store

        assert bucket is not None, "the weed mini command names no -bucket"
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (self.cwd / "weed.log").read_text(errors="replace")
            try:
                with urllib.request.urlopen(f"{endpoint}/healthz", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            assert time.monotonic() < deadline, "weed mini did not start"
            time.sleep(0.1)
        config = next(self.cwd.rglob("identities.json"))
        keys = json.loads(config.read_text())["identities"][0]["credentials"][0]
        store = S3Store(
            bucket.group(1),
            config={
                "endpoint": endpoint,
                "access_key_id": keys["accessKey"],
                "secret_access_key": keys["secretKey"],
                "region": "us-east-1",
            },
            client_options={"allow_http": True},
        )
        while True:
            try:
                obstore.put(store, "_ready", b"")
                obstore.delete(store, "_ready")
                return
            except Exception:
                assert time.monotonic() < deadline, "weed mini's bucket never appeared"
                time.sleep(0.2)

    def stop(self) -> None:
        for process in self.servers:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=10)


def run_page(page: str, cwd: Path, checks: Callable[[PageRun], None] | None = None) -> None:
    """Run the blocks of ``page`` in ``cwd`` (the caller's working directory, with
    ``tempfile``'s folder there too), then each block that could fail the second time
    again, as a reader who runs the examples twice; ``checks`` after each pass."""
    found = [b for b in blocks(page) if b.lang != "text"]
    run = PageRun(cwd)
    try:
        for block in found:
            run.run(block)
        if checks is not None:
            checks(run)
        run.values.clear()
        for block in found:
            if run.again(block):
                run.run(block)
        if checks is not None:
            checks(run)
    finally:
        run.stop()
