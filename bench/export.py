"""Export benchmark: `toolkit export` of the built 1,000-post benchmark site through the
sandbox (in its own process), beside zipping the same files locally with `zipfile`.

`python -m bench export` (or `make bench`) prints the figures; nothing is asserted.

1. The site of `bench/site.py`'s corpus (generated and built when missing): files,
   megabytes, the requests the export made (target: at most files + 5), its wall time
   (the CLI as a subprocess, interpreter start-up included; median of 3) against the
   time `zipfile` (deflate) takes to zip the same files in this process (target: within
   2x), and the export's peak memory.
2. A 1 GiB source (one sparse file of zeros beside a few small ones) exported as a tar,
   so that a whole gigabyte goes up, into the archive and down again: the export's peak
   memory (target under 100 MB: uploads and the download are streamed, the archive is
   checked from disk) and the sandbox's, which receives, archives and serves it
   streamed too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

from bench.common import TOOLKIT, WORK, SandboxProcess, median, run_cli
from bench.site_corpus import corpus

REPEAT = 3
LARGE = 1024**3


def _peak_mb(pid: int) -> float:
    """A running process's peak resident memory so far (Linux: VmHWM)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _cpu_seconds(pid: int) -> float:
    """CPU time a running process has used so far (Linux: /proc/<pid>/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _files(folder: Path) -> list[Path]:
    return sorted(path for path in folder.rglob("*") if path.is_file())


def local_zip(folder: Path, target: Path) -> float:
    """Seconds to zip `folder` with zipfile (deflate, the export's default)."""
    started = time.perf_counter()
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in _files(folder):
            archive.write(path, path.relative_to(folder).as_posix())
    seconds = time.perf_counter() - started
    target.unlink()
    return seconds


def export(
    sandbox: SandboxProcess, project: Path, output: Path, *args: str
) -> tuple[float, float, dict]:
    env = {
        **sandbox.env(),
        "CLOUDCONVERT_BASE_URL": sandbox.base_url,
        "CLOUDCONVERT_API_KEY": sandbox.archive_key,
    }
    run = run_cli(
        [
            "--config",
            str(project / "toolkit.toml"),
            "-q",
            "export",
            "--json",
            "--output",
            str(output),
            *args,
        ],
        project,
        env,
    )
    if run.exit_code != 0:
        raise RuntimeError(f"toolkit export failed:\n{run.output}")
    report = json.loads(run.output)
    output.unlink()
    return run.seconds, run.peak_mb, report


def main() -> None:
    work = corpus()
    ours = work / "ours"
    if not (ours / "site" / "index.html").is_file():
        print("building the benchmark site ...", flush=True)
        subprocess.run(
            [*TOOLKIT, "--config", str(ours / "toolkit.toml"), "-q", "build"], check=True
        )
    out = WORK / "export"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with SandboxProcess() as sandbox:
        sandbox.archive_key = sandbox.control("GET", "/archive/accounts")[0]["api_key"]
        files = _files(ours / "site")
        size = sum(path.stat().st_size for path in files)
        cpu_before = _cpu_seconds(sandbox.process.pid)
        runs = [export(sandbox, ours, out / "site.zip") for _ in range(REPEAT)]
        sandbox_cpu = (_cpu_seconds(sandbox.process.pid) - cpu_before) / REPEAT
        zips = [local_zip(ours / "site", out / "local.zip") for _ in range(REPEAT)]
        report = runs[0][2]
        wall, peak, local = median([r[0] for r in runs]), max(r[1] for r in runs), median(zips)
        print(f"site: {len(files)} files, {size / 1e6:.1f} MB -> {report['size'] / 1e6:.1f} MB zip")
        print(
            f"requests                     {report['requests']:6d}    target <= files + 5 = "
            f"{len(files) + 5}"
        )
        print(
            f"toolkit export, wall         {wall:6.2f} s  (runs: "
            f"{', '.join(f'{r[0]:.2f}' for r in runs)}; CLI start-up included)"
        )
        print(
            f"zipfile locally, same files  {local:6.2f} s  ratio {wall / local:.2f} (target <= 2)"
        )
        print(
            f"  where it goes: {1000 * report['seconds'] / len(files):.2f} ms per file in the "
            f"export command; the sandbox's CPU {sandbox_cpu:.2f} s per export "
            f"({1000 * sandbox_cpu / len(files):.2f} ms per file, zipping included)"
        )
        print(f"toolkit export, peak memory  {peak:6.0f} MB")
        large_project(out / "large", sandbox)


def large_project(folder: Path, sandbox: SandboxProcess) -> None:
    """Export a 1 GiB source and print the client's and the sandbox's peak memory."""
    site = folder / "site"
    site.mkdir(parents=True)
    (folder / "toolkit.toml").write_text('[site]\ntitle = "Large"\n')
    (folder / "content").mkdir()
    with (site / "video.bin").open("wb") as big:  # sparse: no disk, nothing to read
        big.truncate(LARGE)
    for n in range(3):
        (site / f"page-{n}.html").write_text(f"<p>page {n}</p>\n" * 100)
    sandbox_before = _peak_mb(sandbox.process.pid)
    wall, peak, report = export(sandbox, folder, folder / "large.tar", "--format", "tar")
    print(
        f"1 GiB source ({report['entries']} files, {report['source_bytes'] / 1e9:.2f} GB) "
        f"as a {report['size'] / 1e9:.2f} GB tar: export {wall:.1f} s"
    )
    print(
        f"  peak memory: toolkit export {peak:.0f} MB (target < 100), sandbox "
        f"{_peak_mb(sandbox.process.pid):.0f} MB (was {sandbox_before:.0f} MB before)"
    )
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
